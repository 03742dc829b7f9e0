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

/// The environment variable that makes every group of tests run: `.ci/run` sets it when
/// `../shared` is present, so that a missing file there fails instead of skipping.
pub const REQUIRE_ALL: &str = "NUE_REQUIRE_ALL";

/// What each folder of `../shared` holds, and where a reader outside the project finds
/// it: (folder, what it is and where it comes from).
pub const SHARED: &[(&str, &str)] = &[
    (
        "reference",
        "Stockfish 12's net nn-82215d0fd0df.nnue (https://tests.stockfishchess.org/api/nn/\
         nn-82215d0fd0df.nnue) and nn-82215d0fd0df.testvectors.tsv, the net's exact outputs on \
         1,589 positions (tab-separated raw output, output / 16 and FEN), as Stockfish 12 \
         (tag sf_12) computes them",
    ),
    (
        "syzygy",
        "the 3- and 4-piece Syzygy tables (https://tablebase.lichess.ovh/tables/standard/) and \
         endgame.epd, python-chess's probe oracle (data/endgame.epd in \
         https://github.com/niklasf/python-chess)",
    ),
    (
        "books",
        "UHO_4060_v4.epd, unzipped from UHO_4060_v4.zip of \
         https://github.com/official-stockfish/books",
    ),
    (
        "data",
        "sf15-d7-part2.txt.gz, positions in the `<fen> | <score> | <result>` layout (scores of \
         Stockfish 15.1's depth-7 self-play); any file of that layout with 30,000 positions \
         or more will do",
    ),
];

/// Where `relative` (a path inside `../shared`) comes from, for a skip message.
pub fn public_home(relative: &str) -> &'static str {
    let folder = relative.split('/').next().unwrap_or_default();
    SHARED.iter().find(|(f, _)| *f == folder).map_or("(unknown)", |(_, home)| home)
}

/// `../shared/<relative>`, beside the project root (training data, reference net, books,
/// tablebases). When it is missing the test is skipped: this returns `None` and says on
/// stderr (and in the file `NUE_SKIP_LOG` names, if any) what was wanted and where it
/// comes from; with [`REQUIRE_ALL`] set it fails instead.
pub fn shared(relative: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared").join(relative);
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os(REQUIRE_ALL).is_none(),
        "{} is missing ({REQUIRE_ALL} is set, so nothing may be skipped): {}",
        path.display(),
        public_home(relative)
    );
    let note = format!("skipped: needs {} ({})", path.display(), public_home(relative));
    eprintln!("{note}");
    // `.ci/run` lists the skips at its end from this file (appends of one line each, so
    // test binaries running at once do not mix their lines).
    if let Some(log) = std::env::var_os("NUE_SKIP_LOG") {
        use std::io::Write;
        let file = std::fs::OpenOptions::new().create(true).append(true).open(log);
        let _ = file.and_then(|mut f| f.write_all(format!("{note}\n").as_bytes()));
    }
    None
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

/// Stockfish 12's net as bytes, or `None` (skipped) when it is missing.
pub fn reference_bytes() -> Option<Vec<u8>> {
    Some(std::fs::read(shared("reference/nn-82215d0fd0df.nnue")?).unwrap())
}

/// Stockfish 12's default net, loaded once per test binary; `None` (skipped) when it is
/// missing.
pub fn reference_net() -> Option<&'static Network> {
    static NET: OnceLock<Box<Network>> = OnceLock::new();
    let path = shared("reference/nn-82215d0fd0df.nnue")?;
    Some(NET.get_or_init(|| Network::load(&path).expect("the reference net loads")))
}

/// The 1,589 reference positions: (raw output, fen); `None` (skipped) when they are
/// missing.
pub fn reference_vectors() -> Option<Vec<(i32, String)>> {
    let text = std::fs::read_to_string(shared("reference/nn-82215d0fd0df.testvectors.tsv")?)
        .expect("the reference test vectors are readable");
    let vectors = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("raw"))
        .map(|l| {
            let mut cols = l.split('\t');
            let raw = cols.next().unwrap().parse().unwrap();
            let _nnue = cols.next();
            (raw, cols.next().unwrap().to_string())
        })
        .collect();
    Some(vectors)
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
