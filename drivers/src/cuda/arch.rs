//! What a device is and what it can run: the compute capability decides the compile target of
//! the `cuda` target and whether `cuda-emu` can run (part 4); the driver's
//! error codes decide which faults poison the context (part 2). Pure functions: everything
//! here is tested without a GPU.

use super::error::DeviceError;
use serde::{Deserialize, Serialize};
use tcgen05_ir::Target as PtxTarget;

/// A compute capability, `major.minor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Cc {
    /// Major number (9 for Hopper, 10/11 for tcgen05-capable Blackwell).
    pub major: u32,
    /// Minor number.
    pub minor: u32,
}

impl std::fmt::Display for Cc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The device's own tcgen05 targets: its arch-specific (`a`) and family (`f`) names, and the
/// PTX ISA version that introduced each name (reference §1: sm_100a/f 8.6/8.8, sm_103a/f 8.8,
/// sm_110a/f 9.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceTargets {
    /// The arch-specific target (`sm_100a`, `sm_103a`, `sm_110a`).
    pub arch: PtxTarget,
    /// The family target (`sm_100f`, `sm_103f`, `sm_110f`).
    pub family: PtxTarget,
}

/// The tcgen05 targets of a device, or why it has none. tcgen05 exists on compute
/// capability 10.x and 11.x (sm_100/101/103/110; reference §1); 12.x (consumer Blackwell,
/// sm_120) and everything older has no tensor memory.
pub fn tcgen05_targets(cc: Cc) -> Result<DeviceTargets, DeviceError> {
    let (arch, family) = match (cc.major, cc.minor) {
        (10, 0) => (PtxTarget::Sm100a, PtxTarget::Sm100f),
        (10, 3) => (PtxTarget::Sm103a, PtxTarget::Sm103f),
        // sm_101 was renamed sm_110 in PTX ISA 9.0 (reference §1); drivers of either
        // naming report the same silicon.
        (10, 1) | (11, 0) => (PtxTarget::Sm110a, PtxTarget::Sm110f),
        (10 | 11, _) => return Err(DeviceError::UnknownGeneration(cc)),
        _ => return Err(DeviceError::NoTcgen05(cc)),
    };
    Ok(DeviceTargets { arch, family })
}

/// The PTX ISA version that first knows a target name (reference §1, GEN-PTXVER).
pub fn min_ptx_version(t: PtxTarget) -> (u8, u8) {
    match t {
        PtxTarget::Sm100a => (8, 6),
        PtxTarget::Sm100f | PtxTarget::Sm103a | PtxTarget::Sm103f => (8, 8),
        PtxTarget::Sm110a | PtxTarget::Sm110f => (9, 0),
        PtxTarget::Sm90a => (8, 0),
        PtxTarget::Sm100 => (8, 6),
        PtxTarget::Sm120a => (8, 7),
    }
}

/// Whether the `cuda-emu` lowering runs on a device: it is sm_90 PTX with clusters, so any
/// device of compute capability 9.0 or newer.
pub fn emu_supported(cc: Cc) -> Result<(), DeviceError> {
    if cc.major >= 9 {
        Ok(())
    } else {
        Err(DeviceError::NoClusters(cc))
    }
}

/// How a program's `.target` / `.version` lines are rewritten for the device (each
/// program is compiled for the device's own target). A tcgen05 `a` target becomes the
/// device's `a` target, an `f` target the device's `f` target; the PTX version is raised to
/// the first that knows the new name. A non-tcgen05 target (a GEN-TARGET near-miss) is kept,
/// so the driver rejects it as it would any such module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retarget {
    /// The `.target` written.
    pub target: String,
    /// The `.version` written.
    pub version: String,
    /// Whether anything changed.
    pub changed: bool,
}

/// Decides the retargeting of a program written for `program_target` / `program_version`.
pub fn retarget(
    program_target: PtxTarget,
    program_version: (u8, u8),
    dev: DeviceTargets,
) -> Retarget {
    let family = matches!(
        program_target,
        PtxTarget::Sm100f | PtxTarget::Sm103f | PtxTarget::Sm110f
    );
    let arch = matches!(
        program_target,
        PtxTarget::Sm100a | PtxTarget::Sm103a | PtxTarget::Sm110a
    );
    let new = if family {
        dev.family
    } else if arch {
        dev.arch
    } else {
        program_target
    };
    let version = program_version.max(min_ptx_version(new));
    Retarget {
        target: new.as_str().to_string(),
        version: format!("{}.{}", version.0, version.1),
        changed: new != program_target || version != program_version,
    }
}

/// Rewrites the `.version` and `.target` lines of a printed module.
pub fn apply_retarget(ptx: &str, r: &Retarget) -> String {
    let mut out = String::with_capacity(ptx.len() + 16);
    for line in ptx.lines() {
        let t = line.trim_start();
        if t.starts_with(".version ") {
            out.push_str(".version ");
            out.push_str(&r.version);
        } else if t.starts_with(".target ") {
            out.push_str(".target ");
            out.push_str(&r.target);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// The driver error codes this harness reasons about (CUDA driver API `CUresult`).
pub mod code {
    /// `CUDA_SUCCESS`.
    pub const SUCCESS: u32 = 0;
    /// `CUDA_ERROR_NOT_READY`: the stream has work in flight.
    pub const NOT_READY: u32 = 600;
    /// `CUDA_ERROR_NO_DEVICE`.
    pub const NO_DEVICE: u32 = 100;
    /// `CUDA_ERROR_INVALID_PTX`.
    pub const INVALID_PTX: u32 = 218;
    /// `CUDA_ERROR_NO_BINARY_FOR_GPU`.
    pub const NO_BINARY_FOR_GPU: u32 = 209;
    /// `CUDA_ERROR_UNSUPPORTED_PTX_VERSION`.
    pub const UNSUPPORTED_PTX_VERSION: u32 = 222;
    /// `CUDA_ERROR_JIT_COMPILER_NOT_FOUND`.
    pub const JIT_COMPILER_NOT_FOUND: u32 = 221;
    /// `CUDA_ERROR_ILLEGAL_ADDRESS`.
    pub const ILLEGAL_ADDRESS: u32 = 700;
    /// `CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES`.
    pub const LAUNCH_OUT_OF_RESOURCES: u32 = 701;
    /// `CUDA_ERROR_LAUNCH_TIMEOUT`.
    pub const LAUNCH_TIMEOUT: u32 = 702;
    /// `CUDA_ERROR_ASSERT`.
    pub const ASSERT: u32 = 710;
    /// `CUDA_ERROR_HARDWARE_STACK_ERROR`.
    pub const HARDWARE_STACK_ERROR: u32 = 714;
    /// `CUDA_ERROR_ILLEGAL_INSTRUCTION`.
    pub const ILLEGAL_INSTRUCTION: u32 = 715;
    /// `CUDA_ERROR_MISALIGNED_ADDRESS`.
    pub const MISALIGNED_ADDRESS: u32 = 716;
    /// `CUDA_ERROR_INVALID_ADDRESS_SPACE`.
    pub const INVALID_ADDRESS_SPACE: u32 = 717;
    /// `CUDA_ERROR_INVALID_PC`.
    pub const INVALID_PC: u32 = 718;
    /// `CUDA_ERROR_LAUNCH_FAILED` (also what `trap;` gives).
    pub const LAUNCH_FAILED: u32 = 719;
    /// `CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE`.
    pub const COOPERATIVE_LAUNCH_TOO_LARGE: u32 = 720;
    /// `CUDA_ERROR_TENSOR_MEMORY_LEAK` (CUDA 12.8+): a kernel exited with TMEM allocated.
    pub const TENSOR_MEMORY_LEAK: u32 = 721;
    /// `CUDA_ERROR_ECC_UNCORRECTABLE`.
    pub const ECC_UNCORRECTABLE: u32 = 214;
    /// `CUDA_ERROR_CONTEXT_IS_DESTROYED`.
    pub const CONTEXT_IS_DESTROYED: u32 = 709;
}

/// What a driver error means for the run and for the worker's context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FaultClass {
    /// The kernel exited with TMEM allocated (721): outcome `Leaked`.
    TmemLeak,
    /// A trap: `trap;`, an assert or a guardrail check (719, 710): outcome `Trapped`.
    Trap,
    /// An illegal instruction (715): outcome `Trapped(IllegalInstruction)`.
    IllegalInstruction,
    /// An illegal, misaligned or wrong-space address (700, 716, 717): `Trapped(IllegalAddress)`.
    IllegalAddress,
    /// Any other error during or after the launch: outcome `Faulted`.
    Other,
}

/// Classifies a launch or synchronization error.
pub fn classify(code: u32) -> FaultClass {
    match code {
        code::TENSOR_MEMORY_LEAK => FaultClass::TmemLeak,
        code::LAUNCH_FAILED | code::ASSERT => FaultClass::Trap,
        code::ILLEGAL_INSTRUCTION | code::INVALID_PC => FaultClass::IllegalInstruction,
        code::ILLEGAL_ADDRESS | code::MISALIGNED_ADDRESS | code::INVALID_ADDRESS_SPACE => {
            FaultClass::IllegalAddress
        }
        _ => FaultClass::Other,
    }
}

/// Whether an error poisons the CUDA context ("sticky"): every later call in that context
/// fails, so the worker must be killed and respawned (docs/architecture.md rule 5). Launch-time
/// configuration errors (too many resources, invalid value) are not sticky.
pub fn is_sticky(code: u32) -> bool {
    matches!(
        code,
        code::ILLEGAL_ADDRESS
            | code::LAUNCH_TIMEOUT
            | code::ASSERT
            | code::HARDWARE_STACK_ERROR
            | code::ILLEGAL_INSTRUCTION
            | code::MISALIGNED_ADDRESS
            | code::INVALID_ADDRESS_SPACE
            | code::INVALID_PC
            | code::LAUNCH_FAILED
            | code::TENSOR_MEMORY_LEAK
            | code::ECC_UNCORRECTABLE
            | code::CONTEXT_IS_DESTROYED
    ) || (700..800).contains(&code)
        && code != code::LAUNCH_OUT_OF_RESOURCES
        && code != code::COOPERATIVE_LAUNCH_TOO_LARGE
}

/// The driver's name of a code, for the codes this module names (the worker asks the driver
/// for the others with `cuGetErrorName`).
pub fn code_name(code: u32) -> Option<&'static str> {
    Some(match code {
        code::SUCCESS => "CUDA_SUCCESS",
        code::NOT_READY => "CUDA_ERROR_NOT_READY",
        code::NO_DEVICE => "CUDA_ERROR_NO_DEVICE",
        code::INVALID_PTX => "CUDA_ERROR_INVALID_PTX",
        code::NO_BINARY_FOR_GPU => "CUDA_ERROR_NO_BINARY_FOR_GPU",
        code::UNSUPPORTED_PTX_VERSION => "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        code::JIT_COMPILER_NOT_FOUND => "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
        code::ILLEGAL_ADDRESS => "CUDA_ERROR_ILLEGAL_ADDRESS",
        code::LAUNCH_OUT_OF_RESOURCES => "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
        code::LAUNCH_TIMEOUT => "CUDA_ERROR_LAUNCH_TIMEOUT",
        code::ASSERT => "CUDA_ERROR_ASSERT",
        code::HARDWARE_STACK_ERROR => "CUDA_ERROR_HARDWARE_STACK_ERROR",
        code::ILLEGAL_INSTRUCTION => "CUDA_ERROR_ILLEGAL_INSTRUCTION",
        code::MISALIGNED_ADDRESS => "CUDA_ERROR_MISALIGNED_ADDRESS",
        code::INVALID_ADDRESS_SPACE => "CUDA_ERROR_INVALID_ADDRESS_SPACE",
        code::INVALID_PC => "CUDA_ERROR_INVALID_PC",
        code::LAUNCH_FAILED => "CUDA_ERROR_LAUNCH_FAILED",
        code::COOPERATIVE_LAUNCH_TOO_LARGE => "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
        code::TENSOR_MEMORY_LEAK => "CUDA_ERROR_TENSOR_MEMORY_LEAK",
        code::ECC_UNCORRECTABLE => "CUDA_ERROR_ECC_UNCORRECTABLE",
        code::CONTEXT_IS_DESTROYED => "CUDA_ERROR_CONTEXT_IS_DESTROYED",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blackwell_datacenter_parts_get_their_own_targets() {
        // Reference §1: sm_100a (10.0), sm_103a (10.3), sm_110a (11.0, formerly sm_101a).
        let t = tcgen05_targets(Cc {
            major: 10,
            minor: 0,
        })
        .unwrap();
        assert_eq!((t.arch, t.family), (PtxTarget::Sm100a, PtxTarget::Sm100f));
        let t = tcgen05_targets(Cc {
            major: 10,
            minor: 3,
        })
        .unwrap();
        assert_eq!((t.arch, t.family), (PtxTarget::Sm103a, PtxTarget::Sm103f));
        let t = tcgen05_targets(Cc {
            major: 11,
            minor: 0,
        })
        .unwrap();
        assert_eq!(t.arch, PtxTarget::Sm110a);
    }

    #[test]
    fn hopper_and_consumer_blackwell_say_why_not() {
        let e = tcgen05_targets(Cc { major: 9, minor: 0 })
            .unwrap_err()
            .to_string();
        assert!(e.contains("found compute capability 9.0"), "{e}");
        assert!(e.contains("10.x or 11.x"), "{e}");
        let e = tcgen05_targets(Cc {
            major: 12,
            minor: 0,
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("12.0"), "{e}");
        assert!(emu_supported(Cc { major: 9, minor: 0 }).is_ok());
        assert!(emu_supported(Cc { major: 8, minor: 6 }).is_err());
    }

    #[test]
    fn retargeting_raises_the_version_to_the_first_that_knows_the_name() {
        let dev = tcgen05_targets(Cc {
            major: 11,
            minor: 0,
        })
        .unwrap();
        // sm_110a needs PTX 9.0 (GEN-PTXVER).
        let r = retarget(PtxTarget::Sm100a, (8, 6), dev);
        assert_eq!(
            (r.target.as_str(), r.version.as_str(), r.changed),
            ("sm_110a", "9.0", true)
        );
        let r = retarget(PtxTarget::Sm100f, (8, 8), dev);
        assert_eq!(r.target, "sm_110f");
        // A program already for the device is unchanged.
        let dev = tcgen05_targets(Cc {
            major: 10,
            minor: 0,
        })
        .unwrap();
        let r = retarget(PtxTarget::Sm100a, (8, 6), dev);
        assert!(!r.changed);
        // A GEN-TARGET near-miss keeps its wrong target.
        let r = retarget(PtxTarget::Sm90a, (8, 6), dev);
        assert_eq!(r.target, "sm_90a");
        let ptx = ".version 8.6\n.target sm_100a\n.address_size 64\n";
        let out = apply_retarget(
            ptx,
            &retarget(
                PtxTarget::Sm100a,
                (8, 6),
                tcgen05_targets(Cc {
                    major: 10,
                    minor: 3,
                })
                .unwrap(),
            ),
        );
        assert_eq!(out, ".version 8.8\n.target sm_103a\n.address_size 64\n");
    }

    #[test]
    fn sticky_errors_are_the_ones_that_poison_a_context() {
        // The issue names 721, 700, 719, illegal instruction and trap.
        for c in [721, 700, 719, 715, 710] {
            assert!(is_sticky(c), "{c}");
        }
        for c in [0, 1, 218, 701, 720, 600] {
            assert!(!is_sticky(c), "{c}");
        }
        assert_eq!(classify(721), FaultClass::TmemLeak);
        assert_eq!(classify(719), FaultClass::Trap);
        assert_eq!(classify(700), FaultClass::IllegalAddress);
        assert_eq!(classify(715), FaultClass::IllegalInstruction);
        assert_eq!(code_name(721), Some("CUDA_ERROR_TENSOR_MEMORY_LEAK"));
    }
}
