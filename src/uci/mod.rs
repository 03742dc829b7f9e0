//! The UCI protocol: reads commands from stdin, answers on stdout.
//!
//! The search runs on its own thread, which owns the [`Engine`] while it searches and
//! hands it back when it is done; the reading thread stays free to answer `isready`,
//! `stop`, `ponderhit` and `quit` at once. Any other command that arrives mid-search
//! first stops the search (a GUI should not send one then). Every malformed input gets an
//! `info string` explaining what was wrong, and the engine keeps its state.

pub mod options;

use std::{
    io::{BufRead, Write},
    sync::{
        atomic::{AtomicBool, Ordering::Relaxed},
        Arc,
    },
    thread::JoinHandle,
};

use anyhow::Result;
use shakmaty::{fen::Fen, CastlingMode, Chess, Color, EnPassantMode, Position};

use self::options::{Name, Value, OPTIONS};
use crate::{
    api::{Control, Limits, Report, SEARCH_STACK_BYTES},
    engine::{parse_move, parse_position, Engine, DEFAULT_HASH_MB},
    nnue::{internal_to_cp, PAWN_VALUE},
    types::{Bound, MATE, MATE_IN_MAX},
};

/// The deepest `go perft` counted (deeper asks are counted to this depth).
const MAX_PERFT_DEPTH: u32 = 64;

/// Writes one line to stdout and flushes, holding the lock so lines never interleave.
pub fn send(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Formats a score for `info`: `cp <n>` or `mate <moves>`.
pub fn format_score(score: i32) -> String {
    if score >= MATE_IN_MAX {
        format!("mate {}", (MATE - score + 1) / 2)
    } else if score <= -MATE_IN_MAX {
        format!("mate -{}", (MATE + score) / 2)
    } else {
        format!("cp {}", internal_to_cp(score))
    }
}

/// Formats a search report as an `info` line; with `wdl` (the root's material, for
/// `UCI_ShowWDL`), the score is followed by the model's win/draw/loss per mille.
pub fn format_report(r: &Report, mode: CastlingMode, wdl: Option<u32>) -> String {
    let ms = r.elapsed.as_millis();
    // Nodes per second only once a millisecond has passed: before, it means nothing.
    let nps = if ms > 0 {
        format!(" nps {}", (r.nodes as f64 / r.elapsed.as_secs_f64()) as u64)
    } else {
        String::new()
    };
    let bound = match r.bound {
        Bound::Lower => " lowerbound",
        Bound::Upper => " upperbound",
        _ => "",
    };
    let wdl = match wdl {
        Some(material) => {
            let [w, d, l] = crate::wdl::FITTED.per_mille(r.score, material);
            format!(" wdl {w} {d} {l}")
        }
        None => String::new(),
    };
    let pv: Vec<String> = r.pv.iter().map(|m| m.to_uci(mode).to_string()).collect();
    format!(
        "info depth {} seldepth {} multipv {} score {}{bound}{wdl} nodes {}{nps} hashfull {} tbhits {} time {ms} pv {}",
        r.depth,
        r.seldepth,
        r.multipv,
        format_score(r.score),
        r.nodes,
        r.hashfull,
        r.tbhits,
        pv.join(" ")
    )
}

/// The protocol state: the engine (absent while a search holds it) and the option values
/// that are not the engine's business.
pub struct Uci {
    engine: Option<Engine>,
    search: Option<JoinHandle<Engine>>,
    control: Arc<Control>,
    /// Set by the search thread once its `bestmove` is out: the thread is then only
    /// handing the engine back, and a new command need not stop anything.
    answered: Arc<AtomicBool>,
    /// The running search ends by itself (a depth, node, time or mate limit).
    bounded: bool,
    chess960: bool,
    show_wdl: bool,
}

/// Runs the UCI loop until `quit` or the end of input. At the end of input a search that
/// ends by itself is let finish (so `echo "go depth 12" | nue` answers a depth-12 move);
/// one waiting for `stop` or `ponderhit` is stopped.
pub fn run() -> Result<()> {
    let mut uci = Uci::new()?;
    let stdin = std::io::stdin();
    let mut line = String::new();
    loop {
        line.clear();
        match stdin.lock().read_line(&mut line) {
            Ok(0) => {
                uci.finish_bounded_search();
                break;
            }
            Ok(_) => {}
            Err(e) => {
                // Not UTF-8, most likely: say so and go on.
                send(&format!("info string cannot read input: {e}"));
                continue;
            }
        }
        if !uci.handle(&line) {
            break;
        }
    }
    uci.stop_search();
    Ok(())
}

/// An engine as the option table's defaults describe it.
fn fresh_engine() -> Result<Engine> {
    Engine::new(DEFAULT_HASH_MB)
}

impl Uci {
    /// A fresh engine with the default options.
    pub fn new() -> Result<Uci> {
        Ok(Uci {
            engine: Some(fresh_engine()?),
            search: None,
            control: Arc::default(),
            answered: Arc::default(),
            bounded: false,
            chess960: options::DEFAULT_CHESS960,
            show_wdl: options::DEFAULT_SHOW_WDL,
        })
    }

    fn mode(&self) -> CastlingMode {
        if self.chess960 {
            CastlingMode::Chess960
        } else {
            CastlingMode::Standard
        }
    }

    /// Stops a running search (it prints its `bestmove`) and takes the engine back.
    fn stop_search(&mut self) {
        self.join_search(true);
    }

    /// Waits for a running search that ends by itself, and takes the engine back.
    fn finish_bounded_search(&mut self) {
        if self.bounded && !self.control.pondering.load(Relaxed) {
            self.join_search(false);
        }
    }

    fn join_search(&mut self, stop: bool) {
        if let Some(handle) = self.search.take() {
            if stop {
                self.control.stop.store(true, Relaxed);
                self.control.pondering.store(false, Relaxed);
            }
            match handle.join() {
                Ok(engine) => self.engine = Some(engine),
                Err(_) => {
                    send("info string the search thread failed; starting a fresh engine");
                    self.engine = fresh_engine().ok();
                }
            }
        }
    }

    /// The engine, after waiting for a search that has already finished, or stopping
    /// one that has not.
    fn engine(&mut self) -> &mut Engine {
        if self.search.as_ref().is_some_and(|h| !h.is_finished()) && !self.answered.load(Relaxed) {
            send("info string a search is running; stopping it first");
        }
        self.stop_search();
        if self.engine.is_none() {
            self.engine = Some(fresh_engine().expect("an engine with the default hash size"));
        }
        self.engine.as_mut().expect("just set")
    }

    /// Handles one input line; `false` means quit.
    pub fn handle(&mut self, line: &str) -> bool {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some((&command, args)) = words.split_first() else {
            return true;
        };
        match command {
            "uci" => {
                send(&format!("id name Nue {}", env!("NUE_VERSION")));
                send("id author the Nue developers");
                for spec in OPTIONS.iter().copied().chain(options::tunables()) {
                    send(&spec.to_string());
                }
                send("uciok");
            }
            "isready" => send("readyok"),
            "ucinewgame" => self.engine().new_game(),
            "setoption" => self.set_option(args),
            "position" => self.position(args),
            "go" => self.go(args),
            "stop" => self.stop_search(),
            "ponderhit" => self.control.ponderhit(),
            "quit" => return false,
            "d" => self.display(),
            "eval" => self.eval(),
            "debug" | "register" => {}
            _ => send(&format!("info string unknown command '{}'", line.trim())),
        }
        true
    }

    fn set_option(&mut self, args: &[&str]) {
        let setting = match options::parse(args) {
            Ok(s) => s,
            Err(e) => return send(&format!("info string {e}")),
        };
        let engine = self.engine();
        match (setting.name, setting.value) {
            (Name::Hash, Value::Int(mb)) => {
                if let Err(e) = engine.set_hash(mb as usize) {
                    send(&format!("info string {e:#}"));
                }
            }
            (Name::Threads, Value::Int(n)) => engine.set_threads(n as usize),
            (Name::ClearHash, _) => engine.clear_hash(),
            (Name::MultiPv, Value::Int(n)) => engine.settings.multipv = n as usize,
            (Name::MoveOverhead, Value::Int(ms)) => engine.settings.move_overhead = ms as u64,
            (Name::EvalFile, Value::Text(path)) => {
                let default = crate::nnue::default_net::NAME;
                if path.is_empty() || path == "<default>" || path == default {
                    engine.use_default_net();
                } else {
                    match engine.load_net(std::path::Path::new(&path)) {
                        Ok(()) => send(&format!("info string loaded net {path}")),
                        Err(e) => send(&format!(
                            "info string {e:#}; keeping the net {}",
                            engine.net_name()
                        )),
                    }
                }
            }
            (Name::Chess960, Value::Bool(on)) => self.chess960 = on,
            (Name::ShowWdl, Value::Bool(on)) => self.show_wdl = on,
            (Name::LimitStrength, Value::Bool(on)) => engine.settings.limit_strength = on,
            (Name::Elo, Value::Int(elo)) => engine.settings.elo = elo as u32,
            (Name::SyzygyPath, Value::Text(path)) => match engine.set_syzygy_path(&path) {
                Ok(Some(tb)) => send(&format!(
                    "info string found {} Syzygy table files, up to {} pieces",
                    tb.files(),
                    tb.max_pieces()
                )),
                Ok(None) => {}
                Err(e) => send(&format!("info string SyzygyPath: {e}; tablebases are off")),
            },
            (Name::SyzygyProbeDepth, Value::Int(d)) => {
                engine.settings.syzygy_probe_depth = d as i32
            }
            (Name::SyzygyProbeLimit, Value::Int(n)) => {
                engine.settings.syzygy_probe_limit = n as usize
            }
            (Name::Syzygy50MoveRule, Value::Bool(on)) => {
                engine.settings.syzygy_fifty_move_rule = on
            }
            (Name::Ponder, _) => {}
            (Name::Param(i), Value::Int(v)) => {
                if let Err(e) = crate::search::params::set(i, v as i32) {
                    send(&format!("info string {e}"));
                }
            }
            (name, value) => send(&format!("info string cannot apply {value:?} to {name:?}")),
        }
    }

    /// `position startpos|fen <fen> [moves ...]`. A bad FEN keeps the old position; an
    /// illegal move keeps the position reached before it.
    fn position(&mut self, args: &[&str]) {
        let moves_at = args.iter().position(|&w| w == "moves").unwrap_or(args.len());
        let (setup, moves) = args.split_at(moves_at);
        let mode = self.mode();
        let root = match setup {
            ["startpos"] => Chess::default(),
            ["fen", fen @ ..] if !fen.is_empty() => match parse_position(&fen.join(" "), mode) {
                Ok(pos) => pos,
                Err(e) => return send(&format!("info string {e}; position unchanged")),
            },
            _ => {
                return send(&format!(
                    "info string expected 'position startpos|fen <fen> [moves ...]', got 'position {}'; position unchanged",
                    args.join(" ")
                ))
            }
        };
        let mut pos = root.clone();
        let mut played = Vec::new();
        for &text in moves.iter().skip(1) {
            match parse_move(&pos, text) {
                Some(m) => {
                    played.push(m);
                    pos.play_unchecked(m);
                }
                None => {
                    send(&format!(
                        "info string illegal move '{text}' in {}; the position stops before it",
                        Fen::from_position(&pos, EnPassantMode::Legal)
                    ));
                    break;
                }
            }
        }
        self.engine().set_position(root, &played);
    }

    fn go(&mut self, args: &[&str]) {
        let mode = self.mode();
        let show_wdl = self.show_wdl;
        let engine = self.engine();
        if args.first() == Some(&"perft") {
            let Some(Ok(depth)) = args.get(1).map(|d| d.parse::<u32>()) else {
                return send("info string usage: go perft <depth>");
            };
            // Beyond this the count would outlast any machine; `stop` ends it sooner.
            let depth = depth.min(MAX_PERFT_DEPTH);
            return self.spawn(true, false, move |engine, control| {
                let mut out = Vec::new();
                crate::perft::print_divide(engine.position(), depth, mode, &mut out, &control.stop)
                    .expect("writing to memory cannot fail");
                String::from_utf8_lossy(&out).lines().map(str::to_string).collect()
            });
        }
        let limits = parse_go(args, engine.position());
        let wdl = show_wdl.then(|| crate::wdl::material(engine.position()));
        self.spawn(limits.ends_by_itself(), limits.ponder, move |engine, control| {
            let outcome = engine.go(&limits, control, &mut |r| send(&format_report(r, mode, wdl)));
            match outcome.best {
                Some(best) => {
                    let mut line = format!("bestmove {}", best.to_uci(mode));
                    if let Some(p) = outcome.ponder {
                        line.push_str(&format!(" ponder {}", p.to_uci(mode)));
                    }
                    vec![line]
                }
                None => {
                    let score = if engine.position().is_check() { "mate 0" } else { "cp 0" };
                    vec![format!("info depth 0 score {score}"), "bestmove (none)".to_string()]
                }
            }
        });
    }

    /// Runs `job` (a search or a perft) on its own thread, which owns the engine until the
    /// job is done, so that this thread goes on reading: `isready` is answered at once,
    /// `stop` sets the job's stop flag. The job returns its closing lines (`bestmove`),
    /// sent once the job is marked answered. `bounded`: the job ends by itself (the end of
    /// input waits for it); `pondering`: it starts as a ponder search.
    fn spawn(
        &mut self,
        bounded: bool,
        pondering: bool,
        job: impl FnOnce(&mut Engine, &Control) -> Vec<String> + Send + 'static,
    ) {
        let mut engine = self.engine.take().expect("engine() returned it");
        self.bounded = bounded;
        self.control = Arc::new(Control::default());
        self.control.pondering.store(pondering, Relaxed);
        let control = Arc::clone(&self.control);
        self.answered = Arc::default();
        let answered = Arc::clone(&self.answered);
        let spawned = std::thread::Builder::new()
            .name("search".into())
            .stack_size(SEARCH_STACK_BYTES)
            .spawn(move || {
                let closing = job(&mut engine, &control);
                // Before the closing lines go out: a command that answers them must find
                // the job over.
                answered.store(true, Relaxed);
                for line in closing {
                    send(&line);
                }
                engine
            });
        match spawned {
            Ok(handle) => self.search = Some(handle),
            Err(e) => {
                send(&format!("info string cannot start the search thread: {e}"));
                self.engine = fresh_engine().ok();
            }
        }
    }

    fn display(&mut self) {
        let engine = self.engine();
        let pos = engine.position();
        let board = pos.board();
        let mut out = String::new();
        for rank in (0..8).rev() {
            out.push_str(" +---+---+---+---+---+---+---+---+\n");
            for file in 0..8 {
                let sq = shakmaty::Square::from_coords(
                    shakmaty::File::new(file),
                    shakmaty::Rank::new(rank),
                );
                let c = board.piece_at(sq).map_or(' ', |p| p.char());
                out.push_str(&format!(" | {c}"));
            }
            out.push_str(&format!(" | {}\n", rank + 1));
        }
        out.push_str(" +---+---+---+---+---+---+---+---+\n   a   b   c   d   e   f   g   h\n");
        for line in out.lines() {
            send(line);
        }
        send(&format!("Fen: {}", Fen::from_position(pos, EnPassantMode::Legal)));
        send(&format!("Key: {:016X}", crate::board::key_of(pos)));
        let checkers: Vec<String> = pos.checkers().into_iter().map(|s| s.to_string()).collect();
        send(&format!("Checkers: {}", checkers.join(" ")));
    }

    fn eval(&mut self) {
        let engine = self.engine();
        let pos = engine.position().clone();
        let v = engine.evaluate();
        let white = if pos.turn() == Color::White { v } else { -v };
        send(&format!(
            "info string NNUE evaluation {:+.2} (White's view; {white} internal units, {PAWN_VALUE} per pawn; net {})",
            f64::from(internal_to_cp(white)) / 100.0,
            engine.net_name()
        ));
    }
}

/// Parses the words after `go`. Unknown words and malformed numbers are reported and
/// skipped; negative times count as zero.
pub fn parse_go(args: &[&str], pos: &Chess) -> Limits {
    let mut limits = Limits::default();
    let mut i = 0;
    let number = |i: usize, what: &str| -> Option<u64> {
        let Some(text) = args.get(i + 1) else {
            send(&format!("info string go {what} needs a value"));
            return None;
        };
        match text.parse::<i128>() {
            Ok(n) => Some(n.clamp(0, i128::from(u64::MAX)) as u64),
            Err(_) => {
                send(&format!("info string go {what}: '{text}' is not a number; ignored"));
                None
            }
        }
    };
    while i < args.len() {
        let word = args[i];
        let mut consumed = 2;
        match word {
            "wtime" => limits.time[0] = number(i, word),
            "btime" => limits.time[1] = number(i, word),
            "winc" => limits.inc[0] = number(i, word),
            "binc" => limits.inc[1] = number(i, word),
            "movestogo" => limits.moves_to_go = number(i, word).map(|n| n.max(1)),
            "depth" => limits.depth = number(i, word).map(|n| n.clamp(1, 1000) as u32),
            "nodes" => limits.nodes = number(i, word).map(|n| n.max(1)),
            "movetime" => limits.move_time = number(i, word),
            "mate" => limits.mate = number(i, word).map(|n| n.clamp(1, 1000) as u32),
            "infinite" => {
                limits.infinite = true;
                consumed = 1;
            }
            "ponder" => {
                limits.ponder = true;
                consumed = 1;
            }
            "searchmoves" => {
                consumed = 1;
                while let Some(text) = args.get(i + consumed) {
                    match parse_move(pos, text) {
                        Some(m) => limits.search_moves.push(m),
                        None if is_go_keyword(text) => break,
                        None => send(&format!(
                            "info string searchmoves: '{text}' is not a legal move; ignored"
                        )),
                    }
                    consumed += 1;
                }
            }
            _ => {
                send(&format!("info string go: unknown parameter '{word}' ignored"));
                consumed = 1;
            }
        }
        i += consumed;
    }
    limits
}

fn is_go_keyword(word: &str) -> bool {
    matches!(
        word,
        "wtime"
            | "btime"
            | "winc"
            | "binc"
            | "movestogo"
            | "depth"
            | "nodes"
            | "movetime"
            | "mate"
            | "infinite"
            | "ponder"
            | "searchmoves"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores() {
        assert_eq!(format_score(208), "cp 100");
        assert_eq!(format_score(-104), "cp -50");
        assert_eq!(format_score(MATE - 1), "mate 1");
        assert_eq!(format_score(MATE - 2), "mate 1");
        assert_eq!(format_score(MATE - 3), "mate 2");
        assert_eq!(format_score(-MATE + 2), "mate -1");
        assert_eq!(format_score(-MATE + 4), "mate -2");
    }

    #[test]
    fn refused_option_values_leave_the_engine_as_it_was() {
        let mut uci = Uci::new().unwrap();
        uci.handle("setoption name Hash value 2");
        uci.handle("setoption name Threads value 3");
        uci.handle("setoption name MultiPV value 2");
        uci.handle("setoption name Move Overhead value 40");
        for bad in [
            "setoption name Hash value 0",
            "setoption name Hash value 99999999",
            "setoption name Hash value lots",
            "setoption name Threads value 100000",
            "setoption name Threads value 0",
            "setoption name MultiPV value -1",
            "setoption name Move Overhead value 5001",
            "setoption name EvalFile value /nonexistent/net.nnue",
        ] {
            uci.handle(bad);
        }
        let engine = uci.engine();
        assert_eq!(engine.hash_mb(), 2);
        assert_eq!(engine.settings.threads, 3);
        assert_eq!(engine.settings.multipv, 2);
        assert_eq!(engine.settings.move_overhead, 40);
        assert_eq!(engine.net_name(), crate::nnue::default_net::NAME);
    }

    #[test]
    fn go_parameters() {
        let pos = Chess::default();
        let l = parse_go(
            &"wtime 1000 btime -5 winc 10 movestogo 0 searchmoves e2e4 d2d4 depth 7"
                .split(' ')
                .collect::<Vec<_>>(),
            &pos,
        );
        assert_eq!(l.time, [Some(1000), Some(0)]);
        assert_eq!(l.inc, [Some(10), None]);
        assert_eq!(l.moves_to_go, Some(1));
        assert_eq!(l.search_moves.len(), 2);
        assert_eq!(l.depth, Some(7));
        let l = parse_go(&"depth x infinite".split(' ').collect::<Vec<_>>(), &pos);
        assert_eq!(l.depth, None);
        assert!(l.infinite);
    }
}
