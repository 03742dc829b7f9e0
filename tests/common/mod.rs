//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod engine;

use std::{
    ops::Deref,
    path::{Path, PathBuf},
    sync::{OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard},
};

use nue::nnue::Network;
use shakmaty::{fen::Fen, CastlingMode, Chess};

/// A file or folder of `../shared/`, beside the project root (training data, reference
/// net, books); fails with the path it looked for when it is not there.
pub fn shared(relative: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared").join(relative);
    assert!(
        path.exists(),
        "{} is missing: the tests need the project's shared folder beside the checkout",
        path.display()
    );
    path
}

/// `../shared/reference/`, beside the project root: Stockfish 12's net and its test vectors.
pub fn reference_dir() -> PathBuf {
    shared("reference")
}

/// A fresh, empty folder of one test under the system's temporary folder, removed with
/// everything in it when dropped, so that a test run leaves nothing behind (one trainer
/// test alone writes 600 MB of checkpoints). A failing test keeps its folder to be looked
/// at, and says where it is.
pub struct TempDir(PathBuf);

impl TempDir {
    /// `nue-test-<process id>-<name>`: `name` must be unique among the tests of a binary.
    pub fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("nue-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Deref for TempDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept {} for inspection", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

static TIMING: RwLock<()> = RwLock::new(());

/// Held by a test that measures time: no other test of its binary runs meanwhile, so no
/// other search competes for the machine's cores.
pub fn timed() -> RwLockWriteGuard<'static, ()> {
    TIMING.write().unwrap_or_else(|e| e.into_inner())
}

/// Held by every other test of a binary with timed tests: any number may run together,
/// but never beside a timed one.
pub fn untimed() -> RwLockReadGuard<'static, ()> {
    TIMING.read().unwrap_or_else(|e| e.into_inner())
}

/// Stockfish 12's default net, loaded once per test binary.
pub fn reference_net() -> &'static Network {
    static NET: OnceLock<Box<Network>> = OnceLock::new();
    NET.get_or_init(|| {
        Network::load(&reference_dir().join("nn-82215d0fd0df.nnue"))
            .expect("the reference net in ../shared/reference")
    })
}

/// The 1,589 reference positions: (raw output, fen).
pub fn reference_vectors() -> Vec<(i32, String)> {
    let text = std::fs::read_to_string(reference_dir().join("nn-82215d0fd0df.testvectors.tsv"))
        .expect("the reference test vectors");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("raw"))
        .map(|l| {
            let mut cols = l.split('\t');
            let raw = cols.next().unwrap().parse().unwrap();
            let _nnue = cols.next();
            (raw, cols.next().unwrap().to_string())
        })
        .collect()
}

/// The board and side to move of a FEN, legal or not: the evaluator only reads pieces.
pub fn board_and_turn(fen: &str) -> (shakmaty::Board, shakmaty::Color) {
    let setup = fen.parse::<Fen>().unwrap().into_setup();
    (setup.board, setup.turn)
}

/// Parses a FEN that the test knows to be legal.
pub fn position(fen: &str) -> Chess {
    fen.parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap_or_else(|e| panic!("{fen}: {e}"))
}
