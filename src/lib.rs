//! Nue: a UCI chess engine with a HalfKP NNUE evaluation and its own CPU trainer.
//!
//! Module map:
//! - [`uci`]: the protocol loop and the option table; owns no search logic.
//! - [`engine`]: the typed API (position, go, stop, options) that UCI, bench and tests use.
//! - [`api`]: what a search is asked and what it answers (limits, reports, the outcome).
//! - [`search`]: iterative deepening, aspiration windows, PVS, quiescence, Lazy SMP, and
//!   everything only the search uses: move ordering and generation, histories, static
//!   exchange evaluation, the transposition table, `go` limits and time budgets, the
//!   tunable parameters, and weaker play on request.
//! - [`types`]: the vocabulary every layer shares: plies, mate scores, bounds, packed moves.
//! - [`position`]: the search's own position (bitboards, mailbox, key, checkers, pins) and
//!   move, with legal generation in shakmaty's order; shakmaty stays the referee and the
//!   rules at the edges (FEN, UCI moves, books, datagen, the trainer, tablebase probes).
//! - [`board`]: the position stack of a search, keys, repetitions, accumulators.
//! - [`nnue`]: the Stockfish 12 `.nnue` network: loading, feature indexing, the
//!   incremental accumulator stack and its SIMD kernels.
//! - [`syzygy`]: tablebase probes for the search and the root.
//! - [`wdl`]: the win/draw/loss model of `UCI_ShowWDL`.
//! - [`datagen`]: self-play games for training (`nue datagen`), written as game
//!   [`chain`]s, from random openings or a [`book`].
//! - [`train`]: the CPU trainer and quantiser (`nue train`), with its own SIMD kernels,
//!   and the fit of the WDL model (`nue wdl-fit`).
//! - [`pgn`]: PGN games with their comments, for books and the WDL fit.
//! - [`tune`]: `nue tune`, the SPSA tuner of the search parameters: fixed-node games
//!   through fastchess, its whole state in one checksummed file, resumable at any iteration.
//! - [`plot`]: training curves, the nets' history and a tune's paths as SVG (`nue plot`).
//! - [`bench`](mod@bench), [`perft`], [`tools`]: the `bench`, `perft` and `eval` subcommands.
//! - [`rng`]: the seedable generator behind shuffling and training.
//!
//! `unsafe` lives only in the SIMD kernels (`nnue::simd`, `train::simd`), every block
//! with a `// SAFETY:` comment.
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod api;
pub mod bench;
pub mod board;
pub mod book;
pub mod chain;
pub mod datagen;
pub mod engine;
pub mod nnue;
pub mod perft;
pub mod pgn;
pub mod plot;
pub mod position;
pub mod rng;
pub mod search;
pub mod syzygy;
pub mod tools;
pub mod train;
pub mod tune;
pub mod types;
pub mod uci;
pub mod wdl;
