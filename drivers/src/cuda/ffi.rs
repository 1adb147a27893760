//! The only code that calls the CUDA driver: symbols resolved at run time from `libcuda`
//! through cudarc's dynamic loader, so the project builds and runs where no driver exists.
//!
//! Every entry point is declared here with a `u32` result instead of cudarc's `CUresult`
//! enum: a newer driver may return a code the bindings do not list (a Rust enum holding an
//! unlisted value would be undefined behaviour), and the harness must classify every code it
//! gets (FFI errors are data). Types of structures (`CUlaunchConfig`,
//! `CUlaunchAttribute`) come from cudarc's CUDA 12.8 bindings, the first with Blackwell.
#![expect(
    unsafe_code,
    reason = "FFI to the CUDA driver API; each block states its invariant"
)]

use super::arch::{self, Cc};
use super::protocol::DeviceInfo;
use cudarc::driver::sys;
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::ptr;

type Res = u32;

/// A driver error: the code, its name and what was being done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{call} failed: {name} ({code})")]
pub struct DriverError {
    /// The `CUresult` value.
    pub code: u32,
    /// Its name (`CUDA_ERROR_ILLEGAL_ADDRESS`).
    pub name: String,
    /// The call that returned it.
    pub call: &'static str,
}

/// Why [`Gpu::open`] found no usable device.
#[derive(Debug, Clone, thiserror::Error)]
pub enum OpenError {
    /// `cuInit` failed (no device, or a driver without one).
    #[error("no usable CUDA device: cuInit failed with {name} ({code})")]
    Init {
        /// The `CUresult` value.
        code: u32,
        /// Its name.
        name: String,
    },
    /// The driver is older than CUDA 12.0 (`cuLaunchKernelEx`, clusters).
    #[error(
        "the CUDA driver is {}.{}; this harness needs 12.0 or newer (12.8+ for Blackwell)",
        version / 1000,
        version % 1000 / 10
    )]
    OldDriver {
        /// `cuDriverGetVersion`'s value (major * 1000 + minor * 10).
        version: u32,
    },
    /// Device `ordinal` does not exist.
    #[error("no CUDA device {ordinal}: the driver sees {count}")]
    NoDevice {
        /// The ordinal asked for.
        ordinal: u32,
        /// Devices the driver sees.
        count: u32,
    },
    /// Another driver call failed.
    #[error(transparent)]
    Call(DriverError),
}

/// Why [`load`] found no usable driver library.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// `libcuda.so` could not be opened.
    #[error(
        "no CUDA driver: libcuda.so could not be loaded (is the NVIDIA driver installed, and \
         LD_LIBRARY_PATH set?)"
    )]
    NoLibrary,
    /// The library lacks an entry point this harness calls.
    #[error("the CUDA driver lacks {symbol}: {reason}")]
    MissingSymbol {
        /// The entry point.
        symbol: String,
        /// The loader's message.
        reason: String,
    },
}

fn missing(symbol: &[u8], e: &libloading::Error) -> LoadError {
    LoadError::MissingSymbol {
        symbol: String::from_utf8_lossy(symbol).into_owned(),
        reason: e.to_string(),
    }
}

macro_rules! driver_api {
    ($($field:ident = $sym:literal : fn($($arg:ty),*);)*) => {
        /// The driver entry points the worker uses.
        #[derive(Clone, Copy)]
        #[expect(non_snake_case, reason = "fields keep the driver's symbol names")]
        pub struct Driver {
            $($field: unsafe extern "C" fn($($arg),*) -> Res,)*
            cuGetErrorName: unsafe extern "C" fn(Res, *mut *const c_char) -> Res,
        }

        impl Driver {
            fn resolve(lib: &'static libloading::Library) -> Result<Driver, LoadError> {
                Ok(Driver {
                    $($field: {
                        // SAFETY: the symbol is the driver API function of this name, whose C
                        // signature is the one declared above (CUDA driver API reference);
                        // `CUresult` is a C enum, passed as a 32-bit unsigned integer.
                        let s = unsafe { lib.get::<unsafe extern "C" fn($($arg),*) -> Res>($sym) };
                        *s.map_err(|e| missing($sym, &e))?
                    },)*
                    cuGetErrorName: {
                        // SAFETY: as above, `CUresult cuGetErrorName(CUresult, const char**)`.
                        let s = unsafe { lib.get::<unsafe extern "C" fn(Res, *mut *const c_char) -> Res>(b"cuGetErrorName") };
                        *s.map_err(|e| missing(b"cuGetErrorName", &e))?
                    },
                })
            }
        }
    };
}

driver_api! {
    cuInit = b"cuInit": fn(c_uint);
    cuDriverGetVersion = b"cuDriverGetVersion": fn(*mut c_int);
    cuDeviceGetCount = b"cuDeviceGetCount": fn(*mut c_int);
    cuDeviceGet = b"cuDeviceGet": fn(*mut sys::CUdevice, c_int);
    cuDeviceGetAttribute = b"cuDeviceGetAttribute": fn(*mut c_int, sys::CUdevice_attribute, sys::CUdevice);
    cuDeviceGetName = b"cuDeviceGetName": fn(*mut c_char, c_int, sys::CUdevice);
    cuDevicePrimaryCtxRetain = b"cuDevicePrimaryCtxRetain": fn(*mut sys::CUcontext, sys::CUdevice);
    cuCtxSetCurrent = b"cuCtxSetCurrent": fn(sys::CUcontext);
    cuCtxSynchronize = b"cuCtxSynchronize": fn();
    cuStreamCreate = b"cuStreamCreate": fn(*mut sys::CUstream, c_uint);
    cuStreamQuery = b"cuStreamQuery": fn(sys::CUstream);
    cuModuleLoadDataEx = b"cuModuleLoadDataEx": fn(*mut sys::CUmodule, *const c_void, c_uint, *mut sys::CUjit_option, *mut *mut c_void);
    cuModuleGetFunction = b"cuModuleGetFunction": fn(*mut sys::CUfunction, sys::CUmodule, *const c_char);
    cuModuleUnload = b"cuModuleUnload": fn(sys::CUmodule);
    cuLinkCreate = b"cuLinkCreate_v2": fn(c_uint, *mut sys::CUjit_option, *mut *mut c_void, *mut *mut c_void);
    cuLinkAddData = b"cuLinkAddData_v2": fn(*mut c_void, c_uint, *mut c_void, usize, *const c_char, c_uint, *mut sys::CUjit_option, *mut *mut c_void);
    cuLinkComplete = b"cuLinkComplete": fn(*mut c_void, *mut *mut c_void, *mut usize);
    cuLinkDestroy = b"cuLinkDestroy": fn(*mut c_void);
    cuFuncSetAttribute = b"cuFuncSetAttribute": fn(sys::CUfunction, sys::CUfunction_attribute, c_int);
    cuLaunchKernelEx = b"cuLaunchKernelEx": fn(*const sys::CUlaunchConfig, sys::CUfunction, *mut *mut c_void, *mut *mut c_void);
    cuMemHostAlloc = b"cuMemHostAlloc": fn(*mut *mut c_void, usize, c_uint);
    cuMemHostGetDevicePointer = b"cuMemHostGetDevicePointer_v2": fn(*mut sys::CUdeviceptr, *mut c_void, c_uint);
    cuMemFreeHost = b"cuMemFreeHost": fn(*mut c_void);
}

/// Loads the driver library and resolves the entry points, or says why not.
pub fn load() -> Result<Driver, LoadError> {
    // SAFETY: `is_culib_present` only tries to open the library by its candidate names.
    if !unsafe { sys::is_culib_present() } {
        return Err(LoadError::NoLibrary);
    }
    // SAFETY: the library is present (checked above), so `culib` opens it without panicking;
    // it stays loaded for the life of the process (a static).
    let lib = unsafe { sys::culib() };
    Driver::resolve(lib)
}

/// Page-locked host memory mapped into the device's address space: the kernel writes the
/// observation buffer there, so the host can read it after a trap (the context is dead) or
/// while a hung kernel still runs.
pub struct Mapped {
    host: *mut u32,
    dev: sys::CUdeviceptr,
    words: usize,
}

impl Mapped {
    /// The device address.
    pub fn device_ptr(&self) -> u64 {
        self.dev
    }

    /// Capacity in words.
    pub fn capacity(&self) -> usize {
        self.words
    }

    /// Zeroes the first `n` words (`n <= capacity`).
    pub fn zero(&mut self, n: usize) {
        let n = n.min(self.words);
        // SAFETY: `host` points to `words` writable u32s (cuMemHostAlloc), n <= words, and no
        // kernel runs while the worker zeroes (it is called before the launch).
        unsafe { ptr::write_bytes(self.host, 0, n) };
    }

    /// Writes word `i` (`i < capacity`; ignored otherwise) before a launch.
    pub fn write(&mut self, i: usize, v: u32) {
        if i < self.words {
            // SAFETY: i < words; the memory is valid and aligned for u32, and no kernel runs
            // while the worker writes it (it is called before the launch).
            unsafe { ptr::write_volatile(self.host.add(i), v) };
        }
    }

    /// Copies the first `n` words out with volatile reads (a hung kernel may still write).
    pub fn read(&self, n: usize) -> Vec<u32> {
        let n = n.min(self.words);
        let mut v = Vec::with_capacity(n);
        for i in 0..n {
            // SAFETY: i < words; the memory is valid and aligned for u32; volatile because the
            // device may write it concurrently (a hang), and any value read is acceptable.
            v.push(unsafe { ptr::read_volatile(self.host.add(i)) });
        }
        v
    }
}

/// The worker's CUDA state: one device, its primary context, one stream.
pub struct Gpu {
    d: Driver,
    ctx: sys::CUcontext,
    stream: sys::CUstream,
    /// What was opened.
    pub info: DeviceInfo,
}

/// A compiled module and its kernel.
pub struct Kernel {
    module: sys::CUmodule,
    func: sys::CUfunction,
}

// SAFETY: the handles are plain driver handles of the worker's one context; the CUDA driver
// API is thread-safe (CUDA Programming Guide, "Driver API": any thread in which the context
// is current may use them), and every method of `Gpu` is a driver call that touches no Rust
// state but the fields set once in `open`. The worker's compile thread makes the context
// current first (`Gpu::bind`) and only compiles (`Gpu::link`); the stream is used by the
// main thread.
unsafe impl Send for Gpu {}
// SAFETY: as above.
unsafe impl Sync for Gpu {}

/// A module the driver's JIT linker links with a case's PTX ([`Gpu::link`]).
#[derive(Debug, Clone, Copy)]
pub enum LinkInput<'a> {
    /// PTX text, compiled by the JIT.
    Ptx(&'a [u8]),
    /// A relocatable cubin (`ptxas -c`).
    Cubin(&'a [u8]),
}

/// Launch geometry.
#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    /// CTAs along x.
    pub grid_x: u32,
    /// Threads per CTA along x.
    pub block_x: u32,
    /// CTAs per cluster along x.
    pub cluster_x: u32,
    /// Dynamic shared memory bytes.
    pub dyn_smem: u32,
}

/// The options of a JIT call (`cuLinkCreate`, `cuModuleLoadDataEx`): its error and info log
/// buffers and the optimization level. The buffers live as long as the value, so the arrays
/// may be passed to the driver while it is alive.
struct JitOptions {
    opts: Vec<sys::CUjit_option>,
    vals: Vec<*mut c_void>,
    err_log: Vec<u8>,
    info_log: Vec<u8>,
}

impl JitOptions {
    const LOG: usize = 64 * 1024;

    /// Log buffers of [`JitOptions::LOG`] bytes; `opt` sets `CU_JIT_OPTIMIZATION_LEVEL` (0-4;
    /// `None`: the driver's default, 4).
    fn new(opt: Option<u32>) -> JitOptions {
        use sys::CUjit_option as O;
        let mut err_log = vec![0u8; Self::LOG];
        let mut info_log = vec![0u8; Self::LOG];
        let mut opts = vec![
            O::CU_JIT_ERROR_LOG_BUFFER,
            O::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
            O::CU_JIT_INFO_LOG_BUFFER,
            O::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        ];
        // Option values are passed as pointer-sized slots; sizes and levels are stored in the
        // slot itself. The buffers' heap storage does not move when the vectors are moved.
        let mut vals: Vec<*mut c_void> = vec![
            err_log.as_mut_ptr().cast(),
            Self::LOG as *mut c_void,
            info_log.as_mut_ptr().cast(),
            Self::LOG as *mut c_void,
        ];
        if let Some(level) = opt {
            opts.push(O::CU_JIT_OPTIMIZATION_LEVEL);
            vals.push(level.min(4) as usize as *mut c_void);
        }
        JitOptions {
            opts,
            vals,
            err_log,
            info_log,
        }
    }

    /// The error of a failed JIT call: its code, and its name with the error and info logs.
    fn failure(&self, d: &Driver, r: Res) -> (u32, String) {
        let mut log = c_log(&self.err_log);
        let info = c_log(&self.info_log);
        if !info.is_empty() {
            log.push('\n');
            log.push_str(&info);
        }
        (r, format!("{}: {}", error_name(d, r), log))
    }
}

impl Gpu {
    fn check(&self, r: Res, call: &'static str) -> Result<(), DriverError> {
        if r == arch::code::SUCCESS {
            Ok(())
        } else {
            Err(self.error(r, call))
        }
    }

    /// The error value for a code.
    pub fn error(&self, code: u32, call: &'static str) -> DriverError {
        DriverError {
            code,
            name: error_name(&self.d, code),
            call,
        }
    }

    /// Initializes the driver and opens device `ordinal`.
    pub fn open(d: Driver, ordinal: u32) -> Result<Gpu, OpenError> {
        let call = |r: Res, call: &'static str| {
            if r == arch::code::SUCCESS {
                Ok(())
            } else {
                Err(OpenError::Call(DriverError {
                    code: r,
                    name: error_name(&d, r),
                    call,
                }))
            }
        };
        // SAFETY: plain driver calls with valid out-pointers to locals.
        unsafe {
            let r = (d.cuInit)(0);
            if r != arch::code::SUCCESS {
                return Err(OpenError::Init {
                    code: r,
                    name: error_name(&d, r),
                });
            }
            let mut version = 0;
            call((d.cuDriverGetVersion)(&mut version), "cuDriverGetVersion")?;
            // cuLaunchKernelEx and the cluster attribute need a CUDA 12.0 driver.
            if version < 12000 {
                return Err(OpenError::OldDriver {
                    version: version as u32,
                });
            }
            let mut count = 0;
            call((d.cuDeviceGetCount)(&mut count), "cuDeviceGetCount")?;
            if ordinal >= count as u32 {
                return Err(OpenError::NoDevice {
                    ordinal,
                    count: count as u32,
                });
            }
            let mut dev: sys::CUdevice = 0;
            call((d.cuDeviceGet)(&mut dev, ordinal as c_int), "cuDeviceGet")?;
            let attr = |a: sys::CUdevice_attribute| -> Result<u32, OpenError> {
                let mut v = 0;
                call(
                    (d.cuDeviceGetAttribute)(&mut v, a, dev),
                    "cuDeviceGetAttribute",
                )?;
                Ok(v as u32)
            };
            use sys::CUdevice_attribute as A;
            let cc = Cc {
                major: attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
                minor: attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
            };
            let sm_count = attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
            let max_smem_optin = attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?;
            let mut name = [0 as c_char; 256];
            let r = (d.cuDeviceGetName)(name.as_mut_ptr(), name.len() as c_int, dev);
            let name = if r == 0 {
                CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned()
            } else {
                "?".into()
            };
            let mut ctx: sys::CUcontext = ptr::null_mut();
            call(
                (d.cuDevicePrimaryCtxRetain)(&mut ctx, dev),
                "cuDevicePrimaryCtxRetain",
            )?;
            call((d.cuCtxSetCurrent)(ctx), "cuCtxSetCurrent")?;
            let mut stream: sys::CUstream = ptr::null_mut();
            // CU_STREAM_NON_BLOCKING = 1.
            call((d.cuStreamCreate)(&mut stream, 1), "cuStreamCreate")?;
            Ok(Gpu {
                d,
                ctx,
                stream,
                info: DeviceInfo {
                    ordinal,
                    name,
                    cc,
                    driver_version: version as u32,
                    sm_count,
                    max_smem_optin,
                },
            })
        }
    }

    /// Makes the device's context current in the calling thread (a second thread that loads
    /// modules calls it first).
    pub fn bind(&self) -> Result<(), DriverError> {
        // SAFETY: `ctx` is the primary context retained in `open`, alive as long as `self`.
        self.check(
            unsafe { (self.d.cuCtxSetCurrent)(self.ctx) },
            "cuCtxSetCurrent",
        )
    }

    /// Allocates `words` words of mapped page-locked host memory.
    pub fn alloc_mapped(&self, words: usize) -> Result<Mapped, DriverError> {
        let words = words.max(1);
        let mut host: *mut c_void = ptr::null_mut();
        // SAFETY: out-pointer to a local; CU_MEMHOSTALLOC_PORTABLE | DEVICEMAP (1 | 2).
        self.check(
            unsafe { (self.d.cuMemHostAlloc)(&mut host, words * 4, 1 | 2) },
            "cuMemHostAlloc",
        )?;
        let mut dev: sys::CUdeviceptr = 0;
        // SAFETY: `host` was returned by cuMemHostAlloc with DEVICEMAP; flags must be 0.
        let r = unsafe { (self.d.cuMemHostGetDevicePointer)(&mut dev, host, 0) };
        if r != 0 {
            // SAFETY: `host` came from cuMemHostAlloc and is freed once.
            unsafe { (self.d.cuMemFreeHost)(host) };
            return Err(self.error(r, "cuMemHostGetDevicePointer"));
        }
        Ok(Mapped {
            host: host.cast(),
            dev,
            words,
        })
    }

    /// Frees mapped memory.
    #[expect(
        clippy::needless_pass_by_value,
        reason = "consuming the buffer prevents a second free"
    )]
    pub fn free_mapped(&self, m: Mapped) {
        // SAFETY: `m.host` came from cuMemHostAlloc; `m` is consumed, so it is freed once.
        unsafe { (self.d.cuMemFreeHost)(m.host.cast()) };
    }

    /// Links `inputs` (PTX, which the JIT compiles, and relocatable cubins) into one cubin
    /// through the driver's JIT linker (`cuLinkCreate`, `cuLinkAddData`, `cuLinkComplete`),
    /// without loading it: `Err((code, log))` keeps the JIT's error log. `opt` sets the JIT's
    /// optimization level (`CU_JIT_OPTIMIZATION_LEVEL`, 0-4; `None`: the driver's default, 4)
    /// of the PTX inputs. Unlike a `cuModuleLoadDataEx` of PTX, which
    /// holds the context for the whole JIT (a launch and a synchronize of another thread
    /// waited 490 ms at the median on the lent H200, driver 580, while it compiled), the
    /// linker leaves the context free (0.02 ms, as with no compile), so a second thread can
    /// compile the next case while this one runs (`scripts/jit-lock`).
    pub fn link(
        &self,
        inputs: &[LinkInput<'_>],
        opt: Option<u32>,
    ) -> Result<Vec<u8>, (u32, String)> {
        let mut jit = JitOptions::new(opt);
        let mut state: *mut c_void = ptr::null_mut();
        // SAFETY: `jit`'s option arrays have `opts.len()` entries each; its log buffers are
        // `JitOptions::LOG` bytes and outlive the link state, which is destroyed below on
        // every path.
        let r = unsafe {
            (self.d.cuLinkCreate)(
                jit.opts.len() as c_uint,
                jit.opts.as_mut_ptr(),
                jit.vals.as_mut_ptr(),
                &mut state,
            )
        };
        if r != 0 {
            return Err(jit.failure(&self.d, r));
        }
        let mut r = 0;
        for &input in inputs {
            // CU_JIT_INPUT_CUBIN, CU_JIT_INPUT_PTX; PTX is NUL-terminated.
            let (kind, mut data, name) = match input {
                LinkInput::Ptx(p) => {
                    let mut d = p.to_vec();
                    if d.last() != Some(&0) {
                        d.push(0);
                    }
                    (1 as c_uint, d, c"module.ptx")
                }
                LinkInput::Cubin(c) => (0 as c_uint, c.to_vec(), c"module.cubin"),
            };
            // SAFETY: `state` is live; `data` holds `data.len()` bytes of the input and
            // outlives the call; no per-input options.
            r = unsafe {
                (self.d.cuLinkAddData)(
                    state,
                    kind,
                    data.as_mut_ptr().cast(),
                    data.len(),
                    name.as_ptr(),
                    0,
                    ptr::null_mut(),
                    ptr::null_mut(),
                )
            };
            if r != 0 {
                break;
            }
        }
        let mut cubin: *mut c_void = ptr::null_mut();
        let mut size = 0usize;
        let r = if r == 0 {
            // SAFETY: `state` is live; the out-pointers are locals.
            unsafe { (self.d.cuLinkComplete)(state, &mut cubin, &mut size) }
        } else {
            r
        };
        let out = if r == 0 {
            // SAFETY: on success `cubin` points to `size` bytes owned by `state`, still live.
            Ok(unsafe { std::slice::from_raw_parts(cubin.cast::<u8>(), size) }.to_vec())
        } else {
            Err(jit.failure(&self.d, r))
        };
        // SAFETY: `state` came from cuLinkCreate and is destroyed once; nothing refers to it.
        unsafe { (self.d.cuLinkDestroy)(state) };
        out
    }

    /// Compiles `image` (PTX text, or a cubin) through the driver: `Err((code, log))` keeps the
    /// JIT's error log. `opt` sets the JIT's optimization level (`CU_JIT_OPTIMIZATION_LEVEL`,
    /// 0-4; `None`: the driver's default, 4).
    pub fn load_module(
        &self,
        image: &[u8],
        kernel: &str,
        opt: Option<u32>,
    ) -> Result<Kernel, (u32, String)> {
        let mut data = image.to_vec();
        if data.last() != Some(&0) {
            data.push(0);
        }
        let mut jit = JitOptions::new(opt);
        let mut module: sys::CUmodule = ptr::null_mut();
        // SAFETY: `data` is NUL-terminated PTX or a cubin image that outlives the call; `jit`'s
        // option arrays have `opts.len()` entries each; its log buffers are
        // `JitOptions::LOG` bytes and outlive the call.
        let r = unsafe {
            (self.d.cuModuleLoadDataEx)(
                &mut module,
                data.as_ptr().cast(),
                jit.opts.len() as c_uint,
                jit.opts.as_mut_ptr(),
                jit.vals.as_mut_ptr(),
            )
        };
        if r != 0 {
            return Err(jit.failure(&self.d, r));
        }
        let name = CString::new(kernel).map_err(|_| (0, "kernel name holds a NUL".to_string()))?;
        let mut func: sys::CUfunction = ptr::null_mut();
        // SAFETY: `module` was just loaded; `name` is NUL-terminated.
        let r = unsafe { (self.d.cuModuleGetFunction)(&mut func, module, name.as_ptr()) };
        if r != 0 {
            // SAFETY: the module is unloaded once.
            unsafe { (self.d.cuModuleUnload)(module) };
            return Err((
                r,
                format!(
                    "{}: no entry `{kernel}` in the module",
                    error_name(&self.d, r)
                ),
            ));
        }
        Ok(Kernel { module, func })
    }

    /// Unloads a module (errors ignored: after a sticky fault this fails and the process exits).
    #[expect(
        clippy::needless_pass_by_value,
        reason = "consuming the module prevents a use after unload"
    )]
    pub fn unload(&self, k: Kernel) {
        // SAFETY: `k.module` came from cuModuleLoadDataEx and `k` is consumed.
        unsafe { (self.d.cuModuleUnload)(k.module) };
    }

    /// Launches `k` with `params` (device addresses, one `.u64` parameter each) and the
    /// cluster attribute of `g`, on the worker's stream.
    pub fn launch(&self, k: &Kernel, g: Geometry, params: &[u64]) -> Result<(), DriverError> {
        use sys::CUfunction_attribute as F;
        if g.dyn_smem > 48 * 1024 {
            // SAFETY: `k.func` is a live function handle.
            let r = unsafe {
                (self.d.cuFuncSetAttribute)(
                    k.func,
                    F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    g.dyn_smem as c_int,
                )
            };
            self.check(r, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)")?;
        }
        // SAFETY: an all-zero CUlaunchAttribute is a valid value (id 0 = ignore, zero padding).
        let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attr.value.clusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_1 {
            x: g.cluster_x.max(1),
            y: 1,
            z: 1,
        };
        let cfg = sys::CUlaunchConfig {
            gridDimX: g.grid_x,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: g.block_x,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: g.dyn_smem,
            hStream: self.stream,
            attrs: &mut attr,
            numAttrs: u32::from(g.cluster_x > 1),
        };
        let mut vals: Vec<u64> = params.to_vec();
        let mut ptrs: Vec<*mut c_void> = vals.iter_mut().map(|v| (v as *mut u64).cast()).collect();
        // SAFETY: `cfg` and `attr` outlive the call; `ptrs` holds one pointer per kernel
        // parameter (each a .u64 the kernel declares), pointing into `vals`, which outlives the
        // call (the driver copies parameters at launch).
        let r =
            unsafe { (self.d.cuLaunchKernelEx)(&cfg, k.func, ptrs.as_mut_ptr(), ptr::null_mut()) };
        self.check(r, "cuLaunchKernelEx")
    }

    /// `cuStreamQuery`: `Ok(true)` done, `Ok(false)` still running, `Err` a fault.
    pub fn query(&self) -> Result<bool, DriverError> {
        // SAFETY: the stream is live for the life of `self`.
        match unsafe { (self.d.cuStreamQuery)(self.stream) } {
            0 => Ok(true),
            arch::code::NOT_READY => Ok(false),
            r => Err(self.error(r, "cuStreamQuery")),
        }
    }

    /// `cuCtxSynchronize`: surfaces any pending error of the context.
    pub fn synchronize(&self) -> Result<(), DriverError> {
        // SAFETY: the context is current on this thread.
        self.check(unsafe { (self.d.cuCtxSynchronize)() }, "cuCtxSynchronize")
    }
}

fn c_log(buf: &[u8]) -> String {
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).trim().to_string()
}

fn error_name(d: &Driver, code: u32) -> String {
    let mut p: *const c_char = ptr::null();
    // SAFETY: out-pointer to a local; on success the driver returns a static C string.
    let r = unsafe { (d.cuGetErrorName)(code, &mut p) };
    if r == 0 && !p.is_null() {
        // SAFETY: the driver's error names are static NUL-terminated strings.
        return unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    }
    arch::code_name(code)
        .map(str::to_string)
        .unwrap_or_else(|| format!("CUDA error {code}"))
}
