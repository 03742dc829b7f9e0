//! The trainer's hot loops, compiled twice: for the baseline x86-64 and, behind
//! `#[target_feature(enable = "avx2")]`, for processors with AVX2, where LLVM vectorises
//! the same source 256 bits wide. The bodies live in [`super::model`] as
//! `#[inline(always)]` functions; this module only picks the version, once per call of a
//! batch-sized piece of work. Both versions compute the same floats in the same order.

use std::ops::Range;

use super::{
    data::Batch,
    model::{Adam, Chunk, Dense, Lanes, Loss, Model, Row, StepParams, CHUNKS},
};
use crate::nnue::{features::MAX_ACTIVE, simd::Simd};

fn use_avx2() -> bool {
    Simd::avx2().is_some()
}

/// Forward and dense backward pass of a slice of a batch.
#[allow(clippy::too_many_arguments)]
pub fn backward_slice(
    model: &Model,
    batch: &Batch,
    range: Range<usize>,
    d_acc: &mut [[Lanes; 2 * CHUNKS]],
    params: StepParams,
    inv_batch: f32,
    l1_wt: &[[Lanes; 2 * CHUNKS]],
    g: &mut Dense,
) -> Loss {
    #[cfg(target_arch = "x86_64")]
    if use_avx2() {
        // SAFETY: `use_avx2` confirmed that this processor supports AVX2.
        return unsafe {
            avx2::backward_slice(model, batch, range, d_acc, params, inv_batch, l1_wt, g)
        };
    }
    model.backward_slice(batch, range, d_acc, params, inv_batch, l1_wt, g)
}

/// Sparse backward pass of one column chunk: the touched real rows' gradients, and the
/// factoriser rows' derived from them.
pub fn chunk_gradients(
    chunk: &mut Chunk,
    c: usize,
    features: &[[[u16; MAX_ACTIVE]; 2]],
    counts: &[u8],
    d_acc: &[[Lanes; 2 * CHUNKS]],
    rows: &[usize],
) {
    #[cfg(target_arch = "x86_64")]
    if use_avx2() {
        // SAFETY: `use_avx2` confirmed that this processor supports AVX2.
        return unsafe { avx2::chunk_gradients(chunk, c, features, counts, d_acc, rows) };
    }
    chunk.backward(c, features, counts, d_acc);
    chunk.virtual_gradients(rows);
}

/// The optimiser step of one column chunk.
pub fn chunk_step(chunk: &mut Chunk, rows: &[usize], adam: Adam) {
    #[cfg(target_arch = "x86_64")]
    if use_avx2() {
        // SAFETY: `use_avx2` confirmed that this processor supports AVX2.
        return unsafe { avx2::chunk_step(chunk, rows, adam) };
    }
    chunk.step(rows, adam);
}

/// Coalesces a block of real rows, or those marked in `only` (see
/// [`super::model::Model::coalesce`]).
pub fn coalesce_block(
    chunks: &[Chunk],
    first: usize,
    rows: &mut [Row],
    snap: bool,
    only: Option<&[bool]>,
) {
    #[cfg(target_arch = "x86_64")]
    if use_avx2() {
        // SAFETY: `use_avx2` confirmed that this processor supports AVX2.
        return unsafe { avx2::coalesce_block(chunks, first, rows, snap, only) };
    }
    super::model::coalesce_block(chunks, first, rows, snap, only);
}

/// Float evaluation of one position, internal units.
pub fn evaluate(model: &Model, features: &[[u16; MAX_ACTIVE]; 2], count: usize) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if use_avx2() {
        // SAFETY: `use_avx2` confirmed that this processor supports AVX2.
        return unsafe { avx2::evaluate(model, features, count) };
    }
    model.evaluate_impl(features, count)
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::*;

    /// # Safety
    /// The processor must support AVX2.
    #[target_feature(enable = "avx2")]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn backward_slice(
        model: &Model,
        batch: &Batch,
        range: Range<usize>,
        d_acc: &mut [[Lanes; 2 * CHUNKS]],
        params: StepParams,
        inv_batch: f32,
        l1_wt: &[[Lanes; 2 * CHUNKS]],
        g: &mut Dense,
    ) -> Loss {
        model.backward_slice(batch, range, d_acc, params, inv_batch, l1_wt, g)
    }

    /// # Safety
    /// The processor must support AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn chunk_gradients(
        chunk: &mut Chunk,
        c: usize,
        features: &[[[u16; MAX_ACTIVE]; 2]],
        counts: &[u8],
        d_acc: &[[Lanes; 2 * CHUNKS]],
        rows: &[usize],
    ) {
        chunk.backward(c, features, counts, d_acc);
        chunk.virtual_gradients(rows);
    }

    /// # Safety
    /// The processor must support AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn chunk_step(chunk: &mut Chunk, rows: &[usize], adam: Adam) {
        chunk.step(rows, adam);
    }

    /// # Safety
    /// The processor must support AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn coalesce_block(
        chunks: &[Chunk],
        first: usize,
        rows: &mut [Row],
        snap: bool,
        only: Option<&[bool]>,
    ) {
        super::super::model::coalesce_block(chunks, first, rows, snap, only);
    }

    /// # Safety
    /// The processor must support AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn evaluate(model: &Model, features: &[[u16; MAX_ACTIVE]; 2], count: usize) -> f32 {
        model.evaluate_impl(features, count)
    }
}
