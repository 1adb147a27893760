//! The `cuda` (Blackwell) and `cuda-emu` (Hopper emulation) targets: issue 7.
