//! The engine as a typed API: a position, a hash table, a net, search threads. The UCI
//! loop, `bench` and the tests all drive the search through this, never through text.

use std::{
    sync::{atomic::Ordering::Relaxed, Arc},
    time::{Duration, Instant},
};

use anyhow::Result;
use shakmaty::{fen::Fen, uci::UciMove, CastlingMode, Chess, Move, Position};

use crate::{
    api::{Control, Outcome, Report, SearchLimits},
    board::{key_of, Board},
    nnue::{default_net, default_network, simd::Simd, Network},
    rng::Rng,
    search::{
        movegen,
        strength::{self, Strength},
        tablebase_score,
        time::Limits,
        tt::TranspositionTable,
        PaddedCounter, RootMove, Shared, TablebaseProbing, Thread, ThreadData,
    },
    syzygy::Tablebases,
    types::INFINITE,
};

/// A seed that differs from run to run (for limited-strength play, which should not
/// repeat itself game after game).
fn entropy() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ u64::from(std::process::id()).rotate_left(32)
}

/// Stack size of search threads: every ply keeps a move list and a picker on the stack.
pub const SEARCH_STACK_BYTES: usize = 64 << 20;

/// Hash table size of a new engine, MiB (the `Hash` option's default).
pub const DEFAULT_HASH_MB: usize = 16;
/// Time kept back from every move by default, ms (the `Move Overhead` option's default):
/// enough for a loaded machine running many games at once.
pub const DEFAULT_MOVE_OVERHEAD_MS: u64 = 30;

/// Settings that shape a search, set through UCI options.
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
    /// The strength to play at, when limited.
    pub fn strength(&self) -> Option<Strength> {
        self.limit_strength.then(|| Strength::new(self.elo))
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            multipv: 1,
            move_overhead: DEFAULT_MOVE_OVERHEAD_MS,
            threads: 1,
            syzygy_probe_depth: 1,
            syzygy_probe_limit: 7,
            syzygy_fifty_move_rule: true,
            limit_strength: false,
            elo: strength::MIN_ELO,
        }
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
        Ok(Engine {
            tt: TranspositionTable::try_new(hash_mb)?,
            net: default_network(),
            net_name: default_net::NAME.to_string(),
            simd: Simd::detect(),
            threads: vec![ThreadData::default()],
            tablebases: None,
            pos: Chess::default(),
            history: Vec::new(),
            rng: Rng::new(entropy()),
            settings: Settings::default(),
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
                    .or_else(|_| TranspositionTable::try_new(16))?;
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
        let start = Instant::now();
        let mut root_moves: Vec<Move> = self.pos.legal_moves().into_iter().collect();
        if !limits.search_moves.is_empty() {
            root_moves.retain(|m| limits.search_moves.contains(m));
        }
        let tablebases = self.tablebases.as_deref().map(|tables| {
            let mut probing = TablebaseProbing {
                tables,
                limit: self.settings.syzygy_probe_limit,
                depth: self.settings.syzygy_probe_depth,
                fifty_move_rule: self.settings.syzygy_fifty_move_rule,
                root_hits: 0,
                root_score: None,
            };
            // At a root the tables cover, search only the moves that keep the best
            // result (and, when winning, make the fastest progress to it).
            if tables.covers(&self.pos, probing.limit) {
                if let Some(probe) = tables.root_moves(&self.pos, probing.fifty_move_rule) {
                    probing.root_hits = probe.probes as u64;
                    let kept: Vec<Move> =
                        root_moves.iter().copied().filter(|m| probe.moves.contains(m)).collect();
                    if !kept.is_empty() {
                        root_moves = kept;
                        let (score, _) = tablebase_score(probe.wdl, 0, probing.fifty_move_rule);
                        probing.root_score = Some(score);
                    }
                }
            }
            probing
        });
        self.tt.new_search();
        // Limited strength searches a few nodes and keeps several lines to choose from;
        // the GUI sees only the lines it asked for.
        let strength = self.settings.strength();
        let shown_lines = self.settings.multipv;
        let mut search_limits = SearchLimits {
            budget: limits.budget(self.pos.turn(), self.settings.move_overhead),
            depth: limits.depth.map(|d| d.min(i32::MAX as u32) as i32),
            nodes: limits.nodes,
            soft_nodes: limits.soft_nodes,
            mate: limits.mate,
            multipv: shown_lines,
        };
        if let Some(s) = strength {
            search_limits.multipv = shown_lines.max(strength::LINES);
            search_limits.soft_nodes =
                Some(search_limits.soft_nodes.map_or(s.soft_nodes(), |n| n.min(s.soft_nodes())));
            search_limits.nodes =
                Some(search_limits.nodes.map_or(s.hard_nodes(), |n| n.min(s.hard_nodes())));
        }
        let lines = search_limits.multipv.min(root_moves.len());
        let report = &mut |r: &Report| {
            if r.multipv <= shown_lines {
                report(r);
            }
        };
        let shared = Shared {
            tt: &self.tt,
            net: &self.net,
            control,
            limits: search_limits,
            nodes: (0..self.threads.len()).map(|_| PaddedCounter::default()).collect(),
            start,
            tablebases,
            tbhits: (0..self.threads.len()).map(|_| PaddedCounter::default()).collect(),
        };
        let board = Board::new(self.pos.clone(), &self.history, &self.net, self.simd);
        let (main_data, helper_data) = self.threads.split_first_mut().expect("one thread");

        let rng = &mut self.rng;
        let (best, depth) = std::thread::scope(|scope| {
            let shared = &shared;
            let mut helpers = Vec::new();
            for (i, data) in helper_data.iter_mut().enumerate() {
                let board = board.clone();
                let root_moves = &root_moves;
                let handle = std::thread::Builder::new()
                    .name(format!("search-{}", i + 1))
                    .stack_size(SEARCH_STACK_BYTES)
                    .spawn_scoped(scope, move || {
                        Thread::new(i + 1, shared, data, board, root_moves).iterate(&mut |_| {});
                    });
                match handle {
                    Ok(h) => helpers.push(h),
                    Err(e) => eprintln!("info string could not start a search thread: {e}"),
                }
            }
            let mut main = Thread::new(0, shared, main_data, board, &root_moves);
            main.iterate(report);
            // A finished infinite or ponder search waits for its `stop` or `ponderhit`.
            let mut waited = false;
            while !control.stop.load(Relaxed)
                && (limits.infinite || control.pondering.load(Relaxed))
            {
                waited = true;
                std::thread::sleep(Duration::from_millis(1));
            }
            control.stop.store(true, Relaxed);
            for h in helpers {
                let _ = h.join();
            }
            main.report_final(report, waited);
            let depth = main.completed_depth;
            if let Some(s) = strength.filter(|_| depth > 0) {
                let chosen = pick_weaker(s, &main.root_moves[..lines], rng);
                if chosen > 0 {
                    // The last line the GUI sees starts with the move played.
                    let mut line = main.report(depth, chosen);
                    line.multipv = 1;
                    report(&line);
                    main.root_moves.swap(0, chosen);
                }
            }
            (main.root_moves.first().cloned(), depth)
        });

        let nodes = shared.total_nodes();
        let Some(best) = best else {
            return Outcome { nodes, ..Outcome::default() };
        };
        let ponder = best.pv.get(1).copied().or_else(|| self.guess_reply(best.mv));
        let (score, _) = shared.root_verdict(best.score, best.bound);
        Outcome { best: Some(best.mv), ponder, score, depth, nodes }
    }

    /// The stored best reply to `m`, if the table has one that is legal.
    fn guess_reply(&self, m: Move) -> Option<Move> {
        let mut after = self.pos.clone();
        after.play_unchecked(m);
        let hit = self.tt.probe(key_of(&after), 0, after.halfmoves())?;
        movegen::unpack(&after, hit.mv)
    }
}

/// The line limited-strength play chooses among `root` (best first): only lines with a
/// full score from the last iteration take part.
fn pick_weaker(strength: Strength, root: &[RootMove], rng: &mut Rng) -> usize {
    let scores: Vec<i32> =
        root.iter().map(|rm| rm.score).take_while(|&score| score > -INFINITE).collect();
    strength.pick(&scores, rng)
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
                let hit = engine.tt.probe(singular_key(key, reply), 1, 0);
                singular += usize::from(hit.is_some_and(|h| h.depth > 0));
            }
        }
        assert!(own > 0 && singular > 0, "{own} entries of their own, {singular} singular");
    }
}
