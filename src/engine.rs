//! The engine as a typed API: a position, a hash table, a net, search threads. The UCI
//! loop, `bench` and the tests all drive the search through this, never through text.

use std::sync::Arc;

use anyhow::Result;
use shakmaty::{fen::Fen, uci::UciMove, CastlingMode, Chess, Move, Position};

use crate::{
    api::{Control, Limits, Outcome, Report},
    board::{key_of, Board},
    nnue::{default_net, default_network, simd::Simd, Network},
    rng::Rng,
    search::{
        pool::{Search, TablebaseSettings},
        strength::{self, Strength},
        tt::TranspositionTable,
        ThreadData,
    },
    syzygy::Tablebases,
};

/// A seed that differs from run to run (for limited-strength play, which should not
/// repeat itself game after game).
fn entropy() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ u64::from(std::process::id()).rotate_left(32)
}

/// Hash table size of a new engine, MiB (the `Hash` option's default).
pub const DEFAULT_HASH_MB: usize = 16;
/// Time kept back from every move by default, ms (the `Move Overhead` option's default):
/// enough for a loaded machine running many games at once.
pub const DEFAULT_MOVE_OVERHEAD_MS: u64 = 30;

/// Settings that shape a search, set through UCI options. [`Settings::DEFAULT`] is where
/// their defaults are written: the UCI option table reads them from there.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Principal variations to report.
    pub multipv: usize,
    /// Milliseconds kept back from every move for GUI and pipe latency.
    pub move_overhead: u64,
    /// Search threads.
    pub threads: usize,
    /// Tablebases are probed in the search from this depth on (`SyzygyProbeDepth`).
    pub syzygy_probe_depth: i32,
    /// Positions with at most this many pieces are probed (`SyzygyProbeLimit`).
    pub syzygy_probe_limit: usize,
    /// Whether tablebase wins and losses respect the fifty-move rule (`Syzygy50MoveRule`).
    pub syzygy_fifty_move_rule: bool,
    /// Whether play is weakened to `elo` (`UCI_LimitStrength`).
    pub limit_strength: bool,
    /// The rating to play at when limited (`UCI_Elo`).
    pub elo: u32,
}

impl Settings {
    /// A new engine's settings, and the defaults of the UCI options that set them.
    pub const DEFAULT: Settings = Settings {
        multipv: 1,
        move_overhead: DEFAULT_MOVE_OVERHEAD_MS,
        threads: 1,
        syzygy_probe_depth: 1,
        syzygy_probe_limit: 7,
        syzygy_fifty_move_rule: true,
        limit_strength: false,
        elo: strength::MIN_ELO,
    };

    /// The strength to play at, when limited.
    pub fn strength(&self) -> Option<Strength> {
        self.limit_strength.then(|| Strength::new(self.elo))
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings::DEFAULT
    }
}

/// A chess engine: the game so far, and everything needed to search it.
pub struct Engine {
    tt: TranspositionTable,
    net: Arc<Network>,
    net_name: String,
    simd: Simd,
    threads: Vec<ThreadData>,
    tablebases: Option<Arc<Tablebases>>,
    pos: Chess,
    /// Keys of the positions before `pos`, oldest first.
    history: Vec<u64>,
    /// Draws the moves of limited-strength play.
    rng: Rng,
    /// Search settings.
    pub settings: Settings,
}

impl Engine {
    /// An engine at the start position with a `hash_mb` table and the default net.
    pub fn new(hash_mb: usize) -> Result<Engine> {
        let settings = Settings::default();
        Ok(Engine {
            tt: TranspositionTable::try_new(hash_mb)?,
            net: default_network(),
            net_name: default_net::NAME.to_string(),
            simd: Simd::detect(),
            threads: std::iter::repeat_with(ThreadData::default).take(settings.threads).collect(),
            tablebases: None,
            pos: Chess::default(),
            history: Vec::new(),
            rng: Rng::new(entropy()),
            settings,
        })
    }

    /// The current position.
    pub fn position(&self) -> &Chess {
        &self.pos
    }

    /// Keys of the positions that led to the current one.
    pub fn history(&self) -> &[u64] {
        &self.history
    }

    /// Sets the position: `root`, then `moves` played from it (already checked legal).
    pub fn set_position(&mut self, root: Chess, moves: &[Move]) {
        self.history.clear();
        let mut pos = root;
        for &m in moves {
            self.history.push(key_of(&pos));
            pos.play_unchecked(m);
        }
        self.pos = pos;
    }

    /// Forgets everything learned (`ucinewgame`).
    pub fn new_game(&mut self) {
        self.tt.clear();
        for t in &mut self.threads {
            t.clear();
        }
    }

    /// Clears the hash table only (`Clear Hash`).
    pub fn clear_hash(&self) {
        self.tt.clear();
    }

    /// Resizes the hash table; when the memory cannot be had, a table of the old size is
    /// made again (it is cleared either way).
    pub fn set_hash(&mut self, megabytes: usize) -> Result<()> {
        let old = self.tt.megabytes().max(1);
        // Free the old table first, so that the peak is one table, not two.
        self.tt = TranspositionTable::try_new(1)?;
        match TranspositionTable::try_new(megabytes) {
            Ok(tt) => {
                self.tt = tt;
                Ok(())
            }
            Err(e) => {
                self.tt = TranspositionTable::try_new(old)
                    .or_else(|_| TranspositionTable::try_new(DEFAULT_HASH_MB))?;
                Err(e.context(format!("keeping a {} MB table", self.tt.megabytes())))
            }
        }
    }

    /// Current hash size in MiB.
    pub fn hash_mb(&self) -> usize {
        self.tt.megabytes()
    }

    /// Sets the number of search threads.
    pub fn set_threads(&mut self, n: usize) {
        self.settings.threads = n.max(1);
        self.threads.resize_with(self.settings.threads, ThreadData::default);
    }

    /// Loads a net from disk; on failure the current net stays.
    pub fn load_net(&mut self, path: &std::path::Path) -> Result<()> {
        let net = Network::load(path)?;
        self.net = Arc::from(net);
        self.net_name = path.display().to_string();
        Ok(())
    }

    /// Goes back to the net compiled into the binary.
    pub fn use_default_net(&mut self) {
        self.net = default_network();
        self.net_name = default_net::NAME.to_string();
    }

    /// Opens the Syzygy tables of `paths` (folders separated by `:`, `;` on Windows);
    /// an empty string closes them, and so does a path that fails to open.
    pub fn set_syzygy_path(&mut self, paths: &str) -> Result<Option<&Tablebases>, String> {
        self.tablebases = None;
        if paths.trim().is_empty() {
            return Ok(None);
        }
        self.tablebases = Some(Arc::new(Tablebases::open(paths)?));
        Ok(self.tablebases.as_deref())
    }

    /// The Syzygy tables in use.
    pub fn tablebases(&self) -> Option<&Tablebases> {
        self.tablebases.as_deref()
    }

    /// Name of the net in use (a file path, or the embedded net's name).
    pub fn net_name(&self) -> &str {
        &self.net_name
    }

    /// The net in use.
    pub fn net(&self) -> &Network {
        &self.net
    }

    /// Kernels in use.
    pub fn simd(&self) -> Simd {
        self.simd
    }

    /// Static evaluation of the current position, internal units, side to move.
    pub fn evaluate(&self) -> i32 {
        let mut board = Board::new(self.pos.clone(), &self.history, &self.net, self.simd);
        board.evaluate(&self.net)
    }

    /// Searches the current position within `limits`, calling `report` for every `info`
    /// line. Returns when the search is over: at a limit, on `stop`, and for `infinite`
    /// and `ponder` searches not before `stop` or `ponderhit` arrive.
    pub fn go(
        &mut self,
        limits: &Limits,
        control: &Control,
        report: &mut dyn FnMut(&Report),
    ) -> Outcome {
        let search = Search {
            pos: &self.pos,
            history: &self.history,
            tt: &self.tt,
            net: &self.net,
            simd: self.simd,
            tablebases: self.tablebases.as_deref().map(|tables| TablebaseSettings {
                tables,
                limit: self.settings.syzygy_probe_limit,
                depth: self.settings.syzygy_probe_depth,
                fifty_move_rule: self.settings.syzygy_fifty_move_rule,
            }),
            strength: self.settings.strength(),
            multipv: self.settings.multipv,
            move_overhead: self.settings.move_overhead,
        };
        search.run(&mut self.threads, &mut self.rng, limits, control, report)
    }
}

/// Parses a FEN (with or without its move counters) into a legal position. Chess960
/// castling rights (Shredder-FEN or X-FEN) are accepted in standard mode too, since the
/// position is legal; the mode only decides how castling moves are written.
pub fn parse_position(fen: &str, mode: CastlingMode) -> Result<Chess, String> {
    let parsed: Fen = fen.parse().map_err(|e| format!("invalid FEN '{fen}': {e}"))?;
    match parsed.clone().into_position(mode) {
        Ok(pos) => Ok(pos),
        Err(e) => parsed
            .into_position(CastlingMode::Chess960)
            .map_err(|_| format!("illegal position '{fen}': {e}")),
    }
}

/// A legal move of `pos` in UCI notation (`e1g1` and `e1h1` both castle in standard chess).
pub fn parse_move(pos: &Chess, text: &str) -> Option<Move> {
    text.parse::<UciMove>().ok()?.to_move(pos).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::tt::singular_key;

    /// The singular search keeps its result under a key of its own: after a search deep
    /// enough for singular extensions, some positions a ply from the root hold searched
    /// entries for one of their moves excluded, beside their own entries.
    #[test]
    fn singular_searches_keep_entries_of_their_own() {
        let mut engine = Engine::new(16).unwrap();
        let fen = "r1bq1rk1/pp2nppp/2n1p3/3pP3/1b1P4/2NB1N2/PP3PPP/R1BQ1RK1 w - - 0 10";
        engine.set_position(parse_position(fen, CastlingMode::Standard).unwrap(), &[]);
        let limits = Limits { depth: Some(12), ..Limits::default() };
        engine.go(&limits, &Control::default(), &mut |_| {});
        let (mut own, mut singular) = (0, 0);
        for m in engine.position().legal_moves() {
            let mut child = engine.position().clone();
            child.play_unchecked(m);
            let key = key_of(&child);
            own += usize::from(engine.tt.probe(key, 1, 0).is_some());
            for reply in child.legal_moves() {
                let reply = crate::position::Move::from_shakmaty(reply).unwrap();
                let hit = engine.tt.probe(singular_key(key, reply), 1, 0);
                singular += usize::from(hit.is_some_and(|h| h.depth > 0));
            }
        }
        assert!(own > 0 && singular > 0, "{own} entries of their own, {singular} singular");
    }
}
