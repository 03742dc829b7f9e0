//! The trainer's hot loops, compiled twice: for the baseline x86-64 and, behind
//! `#[target_feature(enable = "avx2")]`, for processors with AVX2, where LLVM vectorises
//! the same source 256 bits wide. A hot loop is a [`Kernel`] whose body the model
//! (`super::model`) writes as an `#[inline(always)]` [`Kernel::run`]; [`run`] picks the
//! version, once per call of a batch-sized piece of work. Both versions compute the same
//! floats in the same order.
//!
//! This module knows nothing of the model: it only chooses the instructions a body is
//! compiled for, so the model uses it and it uses nothing of the trainer.

use crate::nnue::simd::Simd;

/// A piece of the trainer's work whose body is compiled once for each instruction set.
pub trait Kernel {
    /// What the work returns.
    type Output;

    /// Does the work. Implementations are `#[inline(always)]`, so that the body is compiled
    /// into each version of [`run`] and vectorised for its instructions.
    fn run(self) -> Self::Output;
}

/// Runs `kernel` in the widest version this processor supports.
pub fn run<K: Kernel>(kernel: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    if Simd::avx2().is_some() {
        // SAFETY: `Simd::avx2` confirmed that this processor supports AVX2.
        return unsafe { avx2::run(kernel) };
    }
    kernel.run()
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::Kernel;

    /// # Safety
    /// The processor must support AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn run<K: Kernel>(kernel: K) -> K::Output {
        kernel.run()
    }
}
