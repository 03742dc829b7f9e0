//! Nue: a UCI chess engine with a HalfKP NNUE evaluation and its own CPU trainer.
//!
//! Module map:
//! - [`nnue`]: the Stockfish 12 `.nnue` network: loading, feature indexing, the
//!   incremental accumulator stack and the SIMD kernels (the crate's only `unsafe`).
//! - [`rng`]: the seedable generator behind data generation, shuffling and training.
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod nnue;
pub mod rng;
pub mod tools;
pub mod train;
