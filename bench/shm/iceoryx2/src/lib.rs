//! The static library takt-bench-iceoryx2 links: iceoryx2-ffi's C functions, whole.
pub use iceoryx2_ffi::*;
