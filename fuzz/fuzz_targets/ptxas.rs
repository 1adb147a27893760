#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = tcgen05_fuzz_targets::ptxas::run(&mut arbitrary::Unstructured::new(data));
});
