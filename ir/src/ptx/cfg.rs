//! Control flow of parsed PTX functions: basic blocks, branches, calls, barriers and mbarrier operations (to be written).
