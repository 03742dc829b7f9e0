//! UCI transcripts through the binary: start-up, options, positions, every `go` form,
//! `stop` and `ponderhit` while searching, mates, game ends, bad input, several threads
//! and several lines. Every search's output is checked as it is read (legal PVs, the
//! `bestmove` first in the last PV: see `common::engine`). Tests that measure time hold
//! `common::timed()`, so no other search of this binary runs beside them.

mod common;

use std::time::{Duration, Instant};

use common::{
    engine::{best_move, last_info, says, Engine},
    TempDir,
};
use nue::search::strength::Strength;
use shakmaty::Position;

const SECOND: Duration = Duration::from_secs(1);

fn started() -> Engine {
    let mut e = Engine::start();
    e.send("uci");
    e.read_until(10 * SECOND, |l| l == "uciok");
    e
}

/// The FEN shown by the `d` command.
fn fen(e: &mut Engine) -> String {
    let lines = e.ask("d");
    let line = lines.iter().find(|l| l.starts_with("Fen: ")).expect("d prints the FEN");
    line["Fen: ".len()..].to_string()
}

#[test]
fn startup_lists_every_option_and_answers_isready() {
    let _lock = common::untimed();
    let mut e = Engine::start();
    e.send("uci");
    let lines = e.read_until(10 * SECOND, |l| l == "uciok");
    assert!(lines[0].starts_with("id name Nue"), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("id author")));
    // The version, and in a git checkout the commit, so that two builds can be told apart.
    let version = concat!("id name Nue ", env!("CARGO_PKG_VERSION"));
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=7", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|out| out.status.success());
    match head {
        Some(out) => {
            let hash = String::from_utf8_lossy(&out.stdout).trim().to_string();
            assert_eq!(lines[0], format!("{version} ({hash})"), "built from {hash}");
        }
        None => assert_eq!(lines[0], version),
    }
    for option in [
        "option name Hash type spin default 16 min 1 max",
        "option name Threads type spin default 1 min 1 max",
        "option name Clear Hash type button",
        "option name Ponder type check default false",
        "option name MultiPV type spin default 1 min 1 max",
        "option name Move Overhead type spin default",
        "option name EvalFile type string default",
        "option name UCI_Chess960 type check default false",
        "option name UCI_ShowWDL type check default false",
        "option name UCI_LimitStrength type check default false",
        "option name UCI_Elo type spin default 1320 min 1320 max 3000",
        "option name SyzygyPath type string default",
        "option name SyzygyProbeDepth type spin default 1 min 1 max 100",
        "option name SyzygyProbeLimit type spin default 7 min 0 max 7",
        "option name Syzygy50MoveRule type check default true",
    ] {
        assert!(lines.iter().any(|l| l.starts_with(option)), "missing '{option}' in {lines:?}");
    }
    assert!(e.ask("").is_empty());
    assert_eq!(e.quit(), Some(0));
}

#[test]
fn every_option_can_be_set() {
    let _lock = common::untimed();
    let mut e = started();
    for (command, answer) in [
        ("setoption name Hash value 32", None),
        ("setoption name Threads value 2", None),
        ("setoption name Clear Hash", None),
        ("setoption name Ponder value true", None),
        ("setoption name MultiPV value 3", None),
        ("setoption name Move Overhead value 30", None),
        ("setoption name EvalFile value <default>", None),
        ("setoption name UCI_Chess960 value false", None),
        ("setoption name UCI_ShowWDL value true", None),
        ("setoption name UCI_Elo value 2200", None),
        ("setoption name UCI_LimitStrength value false", None),
        (
            "setoption name SyzygyPath value /nonexistent/tb",
            Some("is not a folder; tablebases are off"),
        ),
        ("setoption name SyzygyPath value <empty>", None),
        ("setoption name SyzygyProbeDepth value 4", None),
        ("setoption name SyzygyProbeLimit value 5", None),
        ("setoption name Syzygy50MoveRule value false", None),
    ] {
        let lines = e.ask(command);
        match answer {
            None => assert!(lines.is_empty(), "{command}: {lines:?}"),
            Some(text) => assert!(says(&lines, text), "{command}: {lines:?}"),
        }
    }
    // MultiPV 3 with 2 threads: three lines per depth, each with its own multipv index.
    e.ask("position startpos");
    let lines = e.go("go depth 6", 30 * SECOND);
    assert_multipv_lines(&lines, 6, 3);
}

/// For every depth that was reported, the lines `multipv 1..=k` come in order, with
/// distinct first moves and scores that do not rise from one line to the next.
fn assert_multipv_lines(lines: &[String], depth: u32, k: usize) {
    for d in 1..=depth {
        let prefix = format!("info depth {d} ");
        let at_depth: Vec<&String> =
            lines.iter().filter(|l| l.starts_with(&prefix) && !l.contains("bound")).collect();
        // The last k lines of the depth are its final report.
        assert!(at_depth.len() >= k, "depth {d}: {at_depth:?}");
        let report = &at_depth[at_depth.len() - k..];
        let mut firsts = Vec::new();
        let mut last_score = i32::MAX;
        for (i, line) in report.iter().enumerate() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let after = |key: &str| words[words.iter().position(|&w| w == key).unwrap() + 1];
            assert_eq!(after("multipv"), (i + 1).to_string(), "{report:?}");
            assert_eq!(after("score"), "cp", "{line}");
            let score: i32 =
                words[words.iter().position(|&w| w == "score").unwrap() + 2].parse().unwrap();
            assert!(score <= last_score, "line {} scores above the one before: {report:?}", i + 1);
            last_score = score;
            firsts.push(after("pv"));
        }
        firsts.sort_unstable();
        firsts.dedup();
        assert_eq!(firsts.len(), k, "lines share a first move: {report:?}");
    }
}

#[test]
fn bad_option_values_are_answered_and_change_nothing() {
    let _lock = common::untimed();
    let mut e = started();
    for (command, answer) in [
        ("setoption name Hash value lots", "integer"),
        ("setoption name Hash value 0", "out of range 1..1048576; the option is unchanged"),
        ("setoption name Threads value 100000", "out of range 1..1024; the option is unchanged"),
        ("setoption name Threads value 0", "out of range"),
        ("setoption name Ponder value maybe", "true or false"),
        ("setoption name NoSuchOption value 1", "unknown option"),
        ("setoption Hash 16", "expected"),
        ("setoption name MultiPV", "needs a value"),
        ("setoption name UCI_Elo value 1000", "out of range 1320..3000"),
        ("setoption name UCI_LimitStrength value 1", "true or false"),
        ("setoption name EvalFile value /nonexistent/net.nnue", "keeping the net"),
        // The refused values above left the table at its 16 MB.
        ("setoption name Hash value 1048576", "keeping a 16 MB table"),
    ] {
        let lines = e.ask(command);
        assert!(says(&lines, answer), "{command}: {lines:?}");
    }
    // A file that is not a net is refused with the loader's reason.
    let dir = TempDir::new("junk-net");
    let junk = dir.join("junk.nnue");
    std::fs::write(&junk, vec![0u8; 1200]).unwrap();
    let lines = e.ask(&format!("setoption name EvalFile value {}", junk.display()));
    assert!(says(&lines, "unsupported version"), "{lines:?}");
    // The engine still searches on one thread with its default net: a node limit is then
    // exact (several threads would each count), and the evaluation is the embedded net's.
    let lines = e.ask("eval");
    assert!(says(&lines, "net nn-"), "{lines:?}");
    e.ask("position startpos");
    let lines = e.go("go nodes 3000", 10 * SECOND);
    assert_eq!(final_nodes(&lines), 3000, "{lines:?}");
}

/// The node count of a search's last `info` line: after the search has stopped, the
/// engine reports its final count.
fn final_nodes(lines: &[String]) -> u64 {
    last_info(lines, "nodes").unwrap().split(' ').next().unwrap().parse().unwrap()
}

#[test]
fn positions_with_moves_and_castling_notations() {
    let _lock = common::untimed();
    let mut e = started();
    e.ask("position startpos moves e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1g1");
    assert_eq!(fen(&mut e), "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQ1RK1 b kq - 5 4");
    // King-takes-rook castling is accepted too, and en passant and promotion moves.
    e.ask("position fen r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1 moves e1h1 e8a8");
    assert_eq!(fen(&mut e), "2kr3r/8/8/8/8/8/8/R4RK1 w - - 2 2");
    e.ask("position fen 8/P6k/8/3pP3/8/8/8/K7 w - d6 0 1 moves e5d6 h7g7 a7a8q");
    assert_eq!(fen(&mut e), "Q7/6k1/3P4/8/8/8/8/K7 b - - 0 2");
    // A FEN without its counters is fine.
    e.ask("position fen 4k3/8/8/8/8/8/8/4K2R w K -");
    assert_eq!(fen(&mut e), "4k3/8/8/8/8/8/8/4K2R w K - 0 1");
}

#[test]
fn chess960_castling_is_king_takes_rook() {
    let _lock = common::untimed();
    // A Shredder-FEN start with rooks on b1 and g1: queenside castling is e1b1.
    let start = "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1";
    let mut e = started();
    e.ask("setoption name UCI_Chess960 value true");
    e.ask(&format!("position fen {start} moves e1b1"));
    assert!(fen(&mut e).starts_with("1r2k1r1/8/8/8/8/8/8/2KR2R1 b "));
    e.ask(&format!("position fen {start}"));
    let lines = e.go("go depth 3 searchmoves e1b1", 10 * SECOND);
    assert_eq!(best_move(&lines), "e1b1");
    // The same castling move in a standard position is printed in either notation,
    // following the option.
    let standard = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
    e.ask(&format!("position fen {standard}"));
    let lines = e.go("go depth 3 searchmoves e1a1", 10 * SECOND);
    assert_eq!(best_move(&lines), "e1a1");
    e.ask("setoption name UCI_Chess960 value false");
    e.ask(&format!("position fen {standard}"));
    let lines = e.go("go depth 3 searchmoves e1c1", 10 * SECOND);
    assert_eq!(best_move(&lines), "e1c1");
}

#[test]
fn every_go_form_gives_one_bestmove() {
    let _lock = common::untimed();
    let mut e = started();
    e.ask("position startpos moves d2d4 d7d5");
    let forms = [
        "go depth 5",
        "go nodes 20000",
        "go movetime 200",
        "go wtime 3000 btime 3000",
        "go wtime 3000 btime 3000 winc 50 binc 50",
        "go wtime 2000 btime 2000 movestogo 5",
        "go depth 3 searchmoves c2c4 g1f3",
    ];
    for form in forms {
        let lines = e.go(form, 20 * SECOND);
        let bestmoves = lines.iter().filter(|l| l.starts_with("bestmove")).count();
        assert_eq!(bestmoves, 1, "{form}: {lines:?}");
        assert!(e.drain(Duration::from_millis(100)).iter().all(|l| !l.starts_with("bestmove")));
    }
    let lines = e.go("go depth 3 searchmoves c2c4 g1f3", 20 * SECOND);
    assert!(["c2c4", "g1f3"].contains(&best_move(&lines).as_str()));
    let lines = e.go("go depth 7", 20 * SECOND);
    assert!(lines.iter().any(|l| l.starts_with("info depth 7 ")));
    for key in ["seldepth", "multipv", "nodes", "hashfull", "time", "pv"] {
        assert!(last_info(&lines, key).is_some(), "no {key} in {lines:?}");
    }
    // Nodes per second come with every line whose time is not 0.
    let lines = e.go("go movetime 200", 20 * SECOND);
    assert!(last_info(&lines, "nps").is_some(), "no nps in {lines:?}");
    // A new search right after a bestmove finds no search to stop.
    assert!(!lines.iter().any(|l| l.contains("a search is running")), "{lines:?}");
    // Node limits are exact with one thread: the final report shows the search stopped
    // at the limit, not the last iteration before it.
    for limit in [5000, 12345] {
        let lines = e.go(&format!("go nodes {limit}"), 20 * SECOND);
        assert_eq!(final_nodes(&lines), limit, "{lines:?}");
    }
}

#[test]
fn movetime_and_clock_are_respected() {
    let _lock = common::timed();
    let mut e = started();
    e.ask("position startpos");
    let start = Instant::now();
    let lines = e.go("go movetime 300", 10 * SECOND);
    let took = start.elapsed();
    // The engine's own clock: it searched the time it was given, less the overhead.
    let reported: u64 =
        last_info(&lines, "time").unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!((240..=300).contains(&reported), "reported {reported} ms");
    assert!(took < Duration::from_millis(800), "{took:?}");
    let start = Instant::now();
    e.go("go wtime 1000 btime 1000", 10 * SECOND);
    assert!(start.elapsed() < Duration::from_millis(900), "{:?}", start.elapsed());
    // Absurdly little time still gives a move, fast.
    let start = Instant::now();
    let lines = e.go("go wtime 1 btime 1", 10 * SECOND);
    assert!(start.elapsed() < Duration::from_millis(500));
    assert_ne!(best_move(&lines), "(none)");
}

#[test]
fn stop_and_isready_are_answered_while_searching() {
    let _lock = common::timed();
    let mut e = started();
    e.ask("position startpos");
    e.send("go infinite");
    std::thread::sleep(Duration::from_millis(200));
    let start = Instant::now();
    e.send("isready");
    let lines = e.read_until(SECOND, |l| l == "readyok");
    assert!(lines.iter().all(|l| !l.starts_with("bestmove")), "infinite search ended on its own");
    assert!(start.elapsed() < Duration::from_millis(300));
    e.send("stop");
    e.bestmove(SECOND);
    assert!(start.elapsed() < Duration::from_millis(600));
    assert!(e.transcript.iter().any(|l| l.starts_with("info depth")));
    // No second bestmove, and a stop with no search running prints nothing.
    e.send("stop");
    assert!(e.drain(Duration::from_millis(300)).is_empty());
    // An infinite search that runs out of depth still waits for stop.
    e.ask("position fen 7k/8/5KQ1/8/8/8/8/8 w - - 0 1");
    e.send("go infinite depth 3");
    assert!(e.drain(Duration::from_millis(300)).iter().all(|l| !l.starts_with("bestmove")));
    e.send("stop");
    e.bestmove(SECOND);
}

#[test]
fn ponder_then_ponderhit_or_stop() {
    let _lock = common::untimed();
    let mut e = started();
    e.ask("setoption name Ponder value true");
    e.ask("position startpos moves e2e4 e7e5");
    // Pondering does not end on its own, even with little time on the clock.
    e.send("go ponder wtime 1000 btime 1000");
    assert!(e.drain(Duration::from_millis(400)).iter().all(|l| !l.starts_with("bestmove")));
    e.send("ponderhit");
    let lines = e.bestmove(5 * SECOND);
    assert_ne!(best_move(&lines), "(none)");
    // A ponder miss: stop, then a new search.
    e.send("go ponder wtime 10000 btime 10000");
    std::thread::sleep(Duration::from_millis(100));
    e.send("stop");
    e.bestmove(SECOND);
    e.ask("position startpos moves e2e4 c7c5");
    let lines = e.go("go wtime 1000 btime 1000", 5 * SECOND);
    assert_ne!(best_move(&lines), "(none)");
}

#[test]
fn ponderhit_starts_the_clock() {
    let _lock = common::timed();
    let mut e = started();
    e.ask("setoption name Ponder value true");
    e.ask("position startpos moves e2e4 e7e5");
    // 10 s on the clock: a move of about 0.4 s is planned, 1.6 s at most. Pondering
    // lasts 2 s, longer than both: a clock started at `go` would have run out, and the
    // move would come the moment `ponderhit` arrives.
    e.send("go ponder wtime 10000 btime 10000");
    std::thread::sleep(2 * SECOND);
    let start = Instant::now();
    e.send("ponderhit");
    e.bestmove(5 * SECOND);
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(150), "moved {took:?} after ponderhit");
    assert!(took <= Duration::from_millis(2500), "moved {took:?} after ponderhit");
}

/// A ponder search that proves a mate stops deepening and waits quietly; after
/// `ponderhit` its last line comes again before `bestmove`, for clients (python-chess,
/// so lichess-bot) that keep only what follows `ponderhit`.
#[test]
fn a_ponder_search_that_proves_a_mate_waits_quietly_then_reports_again() {
    let _lock = common::untimed();
    let mut e = started();
    e.ask("setoption name Ponder value true");
    e.ask("position fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1");
    e.send("go ponder wtime 10000 btime 10000");
    let pondered = e.drain(Duration::from_millis(500));
    assert!(pondered.iter().all(|l| !l.starts_with("bestmove")), "{pondered:?}");
    let deepest = pondered
        .iter()
        .filter_map(|l| l.strip_prefix("info depth ")?.split(' ').next()?.parse::<u32>().ok())
        .max()
        .expect("the ponder search reported");
    assert!(deepest <= 10, "pondered to depth {deepest} on a mate in one");
    e.send("ponderhit");
    let after = e.bestmove(SECOND);
    assert_eq!(best_move(&after), "a1a8");
    let info = after.iter().rev().find(|l| l.starts_with("info depth"));
    assert!(info.is_some_and(|l| l.contains(" score mate 1 ")), "{after:?}");
}

#[test]
fn mates_are_found_and_scored() {
    let _lock = common::untimed();
    let mut e = started();
    for (fen, moves, best) in [
        ("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", 1, "a1a8"),
        ("r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1", 2, "d5f6"),
        ("r1b1kb1r/pppp1ppp/5q2/4n3/3KP3/2N3PN/PPP4P/R1BQ1B1R b kq - 0 1", 3, "f8c5"),
    ] {
        e.ask(&format!("position fen {fen}"));
        let lines = e.go(&format!("go mate {moves}"), 30 * SECOND);
        assert_eq!(best_move(&lines), best, "{fen}");
        assert_eq!(
            last_info(&lines, "score").unwrap().split(' ').take(2).collect::<Vec<_>>(),
            ["mate", &moves.to_string()]
        );
    }
    // The side that gets mated sees it coming.
    e.ask("position fen r2qkb1r/pp2nppp/3p1N2/2p1N1B1/2BnP3/3P4/PPP2PPP/R2bK2R b KQkq - 2 1");
    let lines = e.go("go depth 6", 30 * SECOND);
    assert!(last_info(&lines, "score").unwrap().starts_with("mate -1"), "{lines:?}");
}

#[test]
fn game_over_positions_and_forced_moves() {
    let _lock = common::timed();
    let mut e = started();
    // Checkmate and stalemate: no move to make.
    e.ask("position fen 7k/6Q1/6K1/8/8/8/8/8 b - - 0 1");
    let lines = e.go("go depth 5", 5 * SECOND);
    assert_eq!(best_move(&lines), "(none)");
    assert!(lines.iter().any(|l| l.contains("score mate 0")));
    e.ask("position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    let lines = e.go("go wtime 1000 btime 1000", 5 * SECOND);
    assert_eq!(best_move(&lines), "(none)");
    assert!(lines.iter().any(|l| l.contains("score cp 0")));
    // A single legal move is played, and quickly.
    e.ask("position fen k7/8/8/8/8/8/1R6/1R5K b - - 0 1");
    let start = Instant::now();
    let lines = e.go("go wtime 60000 btime 60000", 5 * SECOND);
    assert_eq!(best_move(&lines), "a8a7");
    assert!(start.elapsed() < 2 * SECOND);
}

#[test]
fn bad_input_is_answered_and_the_position_kept() {
    let _lock = common::untimed();
    let mut e = started();
    e.ask("position startpos moves e2e4");
    let before = fen(&mut e);
    for (command, answer) in [
        ("hello", "unknown command"),
        ("position", "expected"),
        ("position fen", "expected"),
        ("position fen 8/8/8/8/8/8/8/8 w - - 0 1", "illegal position"),
        (
            "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQ1BNR w KQkq - 0 1",
            "illegal position",
        ),
        ("position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - x 1", "invalid FEN"),
        ("position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 -3", "invalid FEN"),
        (
            "position fen rnbqkbnr/pppppppp/8/8/8/PPPPPPPP/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "illegal position",
        ),
        ("position fen garbage", "invalid FEN"),
        ("position nonsense", "expected"),
    ] {
        let lines = e.ask(command);
        assert!(says(&lines, answer), "{command}: {lines:?}");
        assert_eq!(fen(&mut e), before, "{command} changed the position");
    }
    // An illegal move keeps the moves before it.
    let lines = e.ask("position startpos moves e2e4 e7e5 e1e3 g1f3");
    assert!(says(&lines, "illegal move 'e1e3'"), "{lines:?}");
    assert_eq!(fen(&mut e), "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2");
    let lines = e.ask("position startpos moves zz99");
    assert!(says(&lines, "illegal move 'zz99'"), "{lines:?}");
    // Absurd go values still give a move.
    for go in [
        "go depth -5",
        "go depth 99999999999999999999999 movetime 100",
        "go nodes 0",
        "go wtime -100 btime -100",
        "go movetime -1",
        "go wtime 18446744073709551615 btime 1 depth 2",
        "go movestogo 0 wtime 500 btime 500",
        "go depth banana movetime 50",
        "go frobnicate depth 2",
        "go searchmoves e9e9 depth 2",
    ] {
        let lines = e.go(go, 20 * SECOND);
        assert!(best_move(&lines) != "(none)", "{go}: {lines:?}");
    }
    let lines = e.ask("go perft");
    assert!(says(&lines, "usage"), "{lines:?}");
    assert_eq!(e.quit(), Some(0));
}

#[test]
fn perft_and_eval_commands() {
    let _lock = common::untimed();
    let mut e = started();
    e.ask("position startpos");
    e.send("go perft 3");
    let lines = e.read_until(SECOND * 10, |l| l.starts_with("Nodes searched"));
    assert_eq!(lines.last().unwrap(), "Nodes searched: 8902", "{lines:?}");
    assert_eq!(lines.iter().filter(|l| l.contains(": ")).count(), 21, "{lines:?}");
    let lines = e.ask("eval");
    assert!(lines.iter().any(|l| l.starts_with("info string NNUE evaluation")), "{lines:?}");
}

#[test]
fn a_long_perft_answers_isready_and_stops_on_stop() {
    let _lock = common::untimed();
    let mut e = started();
    e.ask("position startpos");
    e.send("go perft 99");
    // Answered at once, while the count goes on.
    let lines = e.ask("isready");
    assert!(!lines.iter().any(|l| l.starts_with("Nodes searched")), "{lines:?}");
    e.send("stop");
    let lines = e.read_until(SECOND * 5, |l| l.starts_with("Stopped:"));
    assert!(lines.iter().any(|l| l.starts_with("Nodes searched: ")), "{lines:?}");
    assert!(lines.last().unwrap().ends_with("of 20 root moves counted"), "{lines:?}");
    // The engine is itself again.
    let lines = e.go("go depth 3", SECOND * 10);
    assert!(best_move(&lines) != "(none)");
    // `echo "go perft 4" | nue`: the end of input lets the count finish.
    let mut e = started();
    e.send("go perft 4");
    e.close_input();
    let lines = e.read_until(SECOND * 20, |l| l.starts_with("Nodes searched"));
    assert_eq!(lines.last().unwrap(), "Nodes searched: 197281");
    assert_eq!(e.wait_exit(SECOND * 5), Some(0));
}

#[test]
fn quit_while_searching_and_end_of_input() {
    let _lock = common::timed();
    let mut e = started();
    e.ask("position startpos");
    e.send("go infinite");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(e.quit(), Some(0));
    // A GUI that closes the pipe mid-search: the search ends and so does the engine.
    let mut e = started();
    e.ask("position startpos");
    e.send("go infinite");
    std::thread::sleep(Duration::from_millis(100));
    e.close_input();
    assert_eq!(e.wait_exit(5 * SECOND), Some(0));
    // And with no search running.
    let mut e = started();
    e.close_input();
    assert_eq!(e.wait_exit(5 * SECOND), Some(0));
}

#[test]
fn end_of_input_lets_a_bounded_search_finish() {
    let _lock = common::untimed();
    // `echo "go depth 9" | nue`: the input ends at once, the search still reaches depth 9.
    let mut e = started();
    e.ask("position startpos moves e2e4 e7e5");
    e.send("go depth 9");
    e.close_input();
    let lines = e.bestmove(30 * SECOND);
    assert_eq!(
        last_info(&lines, "depth").and_then(|d| d.split(' ').next().map(String::from)),
        Some("9".to_string()),
        "{lines:?}"
    );
    assert_eq!(e.wait_exit(5 * SECOND), Some(0));
}

#[test]
fn stop_at_once_still_answers_a_searched_move() {
    let _lock = common::untimed();
    let mut e = started();
    // A `stop` right behind the `go`: the first iteration is finished all the same, so the
    // queen is taken (White's first legal move in generation order is not the capture).
    for (fen, expected) in [
        ("4k3/8/8/8/8/8/1q6/Q3K3 w - - 0 1", Some("a1b2")),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", None),
    ] {
        e.ask(&format!("position fen {fen}"));
        e.send("go infinite");
        e.send("stop");
        let lines = e.bestmove(10 * SECOND);
        assert!(lines.iter().any(|l| l.starts_with("info depth 1 ")), "{lines:?}");
        if let Some(m) = expected {
            assert_eq!(best_move(&lines), m, "{lines:?}");
        }
    }
}

#[test]
fn threads_share_the_node_limit_and_stop_at_once() {
    let _lock = common::timed();
    let mut e = started();
    e.ask("setoption name Threads value 3");
    e.ask("position startpos moves e2e4");
    // All threads count towards one limit, however the threads are scheduled. The main
    // thread checks the total at every node and the helpers every 64 nodes, so they may
    // each add fewer than 64 nodes past it.
    let lines = e.go("go nodes 50000", 20 * SECOND);
    let nodes = final_nodes(&lines);
    assert!(
        (50_000..50_000 + 3 * 64).contains(&nodes),
        "{nodes} nodes {:?}",
        &lines[lines.len().saturating_sub(3)..]
    );
    // `stop` ends all three at once, and the engine is ready for the next search.
    e.send("go infinite");
    std::thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    e.send("stop");
    e.bestmove(SECOND);
    assert!(start.elapsed() < Duration::from_millis(200), "{:?}", start.elapsed());
    let lines = e.go("go depth 8", 20 * SECOND);
    assert!(!says(&lines, "a search is running"), "{lines:?}");
}

#[test]
fn several_lines_come_in_order_with_distinct_moves() {
    let _lock = common::untimed();
    let mut e = started();
    e.ask("setoption name MultiPV value 4");
    e.ask("position fen r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3");
    let lines = e.go("go depth 7", 30 * SECOND);
    assert_multipv_lines(&lines, 7, 4);
    // More lines than moves: as many lines as there are moves.
    e.ask("position fen 7k/8/8/8/8/8/8/K6R w - - 0 1");
    e.ask("setoption name MultiPV value 40");
    let lines = e.go("go depth 3", 30 * SECOND);
    let moves = e.position.legal_moves().len();
    assert!(lines.iter().any(|l| l.contains(&format!(" multipv {moves} "))));
    assert!(!lines.iter().any(|l| l.contains(&format!(" multipv {} ", moves + 1))));
}

#[test]
fn the_net_and_the_hash_can_change_between_games() {
    let _lock = common::untimed();
    let mut e = started();
    let Some(reference) = common::shared("reference/nn-82215d0fd0df.nnue") else { return };
    let start_eval = |e: &mut Engine| {
        e.ask("position startpos");
        let lines = e.ask("eval");
        lines.iter().find(|l| l.contains("NNUE evaluation")).cloned().expect("an evaluation")
    };
    let ours = start_eval(&mut e);
    e.ask("position startpos moves d2d4");
    e.go("go depth 6", 20 * SECOND);
    // Between games: another net and a bigger table, then the same again.
    e.ask("ucinewgame");
    let lines = e.ask(&format!("setoption name EvalFile value {}", reference.display()));
    assert!(says(&lines, "loaded net"), "{lines:?}");
    e.ask("setoption name Hash value 64");
    let theirs = start_eval(&mut e);
    assert!(theirs.contains("nn-82215d0fd0df.nnue"), "{theirs}");
    assert_ne!(theirs, ours);
    e.ask("position startpos moves d2d4");
    e.go("go depth 6", 20 * SECOND);
    e.ask("ucinewgame");
    e.ask("setoption name EvalFile value <default>");
    e.ask("setoption name Hash value 1");
    assert_eq!(start_eval(&mut e), ours);
    e.ask("position startpos moves d2d4");
    let lines = e.go("go depth 6", 20 * SECOND);
    assert!(lines.iter().any(|l| l.starts_with("info depth 6 ")));
}

#[test]
fn a_chess960_game_lets_the_search_castle() {
    let _lock = common::untimed();
    let mut e = started();
    e.ask("setoption name UCI_Chess960 value true");
    // King on g1, rook on h1: castling leaves the king where it is and brings the rook to
    // f1, which no rook move can, and mates. Written king takes rook: g1h1.
    e.ask("position fen 4rkr1/p3p1p1/8/8/8/8/PP6/6KR w H - 0 1 moves a2a3 a7a6");
    let lines = e.go("go depth 4", 20 * SECOND);
    assert_eq!(best_move(&lines), "g1h1");
    assert!(last_info(&lines, "score").unwrap().starts_with("mate 1 "), "{lines:?}");
    // The game goes on from the castled position: Black is mated.
    e.ask("position fen 4rkr1/p3p1p1/8/8/8/8/PP6/6KR w H - 0 1 moves a2a3 a7a6 g1h1");
    let lines = e.go("go depth 4", 20 * SECOND);
    assert_eq!(best_move(&lines), "(none)");
}

#[test]
fn searches_stopped_by_a_node_limit_leave_legal_lines() {
    let _lock = common::untimed();
    let mut e = started();
    // Node limits that stop searches in every phase of an iteration, aspiration fail-lows
    // included: a line reported then once held moves of a sibling's line (fastchess:
    // "illegal PV"). The engine's output is checked by `Engine::bestmove`.
    for fen in [
        "r1bqk2r/pppp1ppp/5n2/4b3/4P3/P1N5/1PP2PPP/R1BQKB1R w KQkq - 0 5",
        "r1b2rk1/p1q1ppbp/6p1/2Q5/8/4BP2/PPP3PP/2KR1B1R b - - 2 14",
        "6k1/5pp1/8/2bKP2P/2P5/p4PNb/B7/8 b - - 1 44",
    ] {
        for nodes in (2_000..40_000).step_by(3_000) {
            e.ask("ucinewgame");
            e.ask(&format!("position fen {fen}"));
            e.go(&format!("go nodes {nodes}"), 20 * SECOND);
        }
    }
}

#[test]
fn win_draw_loss_follows_every_score_when_asked() {
    let _lock = common::untimed();
    let mut e = started();
    e.ask("position fen r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3");
    let lines = e.go("go depth 6", 20 * SECOND);
    assert!(!lines.iter().any(|l| l.contains(" wdl ")), "{lines:?}");
    e.ask("setoption name UCI_ShowWDL value true");
    let lines = e.go("go depth 6", 20 * SECOND);
    let scored: Vec<&String> = lines.iter().filter(|l| l.contains(" score ")).collect();
    assert!(!scored.is_empty());
    for line in scored {
        // `score cp N [bound] wdl W D L`, the three summing to 1000, a win likelier than a
        // loss for the side ahead.
        let words: Vec<&str> = line.split(' ').collect();
        let at = words.iter().position(|&w| w == "wdl").unwrap_or_else(|| panic!("{line}"));
        let wdl: Vec<u32> = words[at + 1..at + 4].iter().map(|w| w.parse().unwrap()).collect();
        assert_eq!(wdl.iter().sum::<u32>(), 1000, "{line}");
        let cp: i32 = words[words.iter().position(|&w| w == "cp").unwrap() + 1].parse().unwrap();
        if cp.abs() > 20 {
            assert_eq!(wdl[0] > wdl[2], cp > 0, "{line}");
        }
    }
    // A mate is certain.
    e.ask("position fen 3k4/8/3K4/8/8/8/8/7R w - - 0 1");
    let lines = e.go("go depth 4", 20 * SECOND);
    let last = last_info(&lines, "score").unwrap();
    assert!(last.starts_with("mate 1 wdl 1000 0 0 "), "{last}");
}

#[test]
fn limited_strength_varies_within_its_budget_and_keeps_the_queen() {
    let _lock = common::untimed();
    let mut e = started();
    e.ask("setoption name UCI_LimitStrength value true");
    e.ask("setoption name UCI_Elo value 1320");
    // An open position with many playable moves: the weakest level plays several of
    // them, each within its node budget, and shows only the one line asked for (it
    // searches four), the last one starting with the move played (checked by `go`).
    e.ask("position startpos moves e2e4 e7e5 g1f3");
    let budget = Strength::new(1320).hard_nodes();
    let mut played = Vec::new();
    for _ in 0..20 {
        let lines = e.go("go wtime 60000 btime 60000", 10 * SECOND);
        assert!(final_nodes(&lines) <= budget, "{lines:?}");
        assert!(!lines.iter().any(|l| l.contains(" multipv 2 ")), "{lines:?}");
        played.push(best_move(&lines));
    }
    played.sort_unstable();
    played.dedup();
    assert!(played.len() >= 2, "always {played:?}");
    // At 2000 a hanging queen is won every time (Bxg5, or h4 trapping it): the line
    // played, the last one shown, keeps the material.
    e.ask("setoption name UCI_Elo value 2000");
    e.ask("position fen rnb1kbnr/pppp1ppp/8/4p1q1/3PP3/8/PPP2PPP/RNBQKBNR w KQkq - 1 3");
    for _ in 0..10 {
        let lines = e.go("go wtime 60000 btime 60000", 10 * SECOND);
        let score = last_info(&lines, "score").unwrap();
        let cp: i32 =
            score.strip_prefix("cp ").unwrap().split(' ').next().unwrap().parse().unwrap();
        assert!(cp > 500, "{lines:?}");
    }
    // Unlimited again: the search goes as deep as asked.
    e.ask("setoption name UCI_LimitStrength value false");
    e.ask("position startpos moves e2e4 e7e5 g1f3");
    let lines = e.go("go depth 8", 20 * SECOND);
    assert!(lines.iter().any(|l| l.starts_with("info depth 8 ")), "{lines:?}");
}

/// The text of a file of the repository.
fn repo_file(path: &str) -> String {
    let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// The code block after `<!-- setup: NAME -->` in docs/setups.md.
fn setup_block(name: &str) -> String {
    let text = repo_file("docs/setups.md");
    let marker = format!("<!-- setup: {name} -->");
    let after = &text[text.find(&marker).unwrap_or_else(|| panic!("no {marker}"))..];
    let body = &after[after.find("```").expect("a code block") + 3..];
    let body = &body[body.find('\n').unwrap() + 1..];
    body[..body.find("```").expect("the block's end")].to_string()
}

/// The `option.NAME=VALUE` words of a tournament manager's command line.
fn command_line_options(block: &str) -> Vec<(String, String)> {
    block
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("option."))
        .map(|w| {
            let (name, value) = w.split_once('=').expect("option.NAME=VALUE");
            (name.to_string(), value.to_string())
        })
        .collect()
}

/// The `uci_options:` of a lichess-bot engine section.
fn lichess_bot_options(block: &str) -> Vec<(String, String)> {
    let mut lines = block.lines().skip_while(|l| l.trim() != "uci_options:").skip(1);
    let mut options = Vec::new();
    for line in lines.by_ref().take_while(|l| l.starts_with("    ")) {
        let (name, value) = line.trim().split_once(": ").expect("NAME: VALUE");
        options.push((name.to_string(), value.trim_matches('"').to_string()));
    }
    options
}

/// Every option a documented setup sets is one the engine declares, and every value but a
/// folder of the reader's own is accepted without a word.
#[test]
fn documented_setups_set_real_options() {
    let _lock = common::untimed();
    let mut e = Engine::start();
    e.send("uci");
    let listing = e.read_until(10 * SECOND, |l| l == "uciok");
    let lichess = setup_block("lichess-bot");
    assert!(lichess.contains("protocol: \"uci\""), "{lichess}");
    let mut checked = 0;
    for (setup, options) in [
        ("cutechess-cli", command_line_options(&setup_block("cutechess-cli"))),
        ("fastchess", command_line_options(&setup_block("fastchess"))),
        ("lichess-bot", lichess_bot_options(&lichess)),
    ] {
        assert!(options.len() >= 2, "{setup}: {options:?}");
        for (name, value) in options {
            let declared = format!("option name {name} type ");
            assert!(listing.iter().any(|l| l.starts_with(&declared)), "{setup}: no option {name}");
            if name == "SyzygyPath" {
                continue;
            }
            let answer = e.ask(&format!("setoption name {name} value {value}"));
            assert!(answer.is_empty(), "{setup}: {name} = {value}: {answer:?}");
            checked += 1;
        }
    }
    assert!(checked >= 7, "{checked}");
}

/// The option tables of README.md and docs/uci.md are the `uci` listing, and docs/uci.md
/// says what the engine does with a value out of range, in the engine's own words.
#[test]
fn documented_options_are_the_engines() {
    let _lock = common::untimed();
    let mut e = Engine::start();
    e.send("uci");
    let listing: Vec<String> = e
        .read_until(10 * SECOND, |l| l == "uciok")
        .into_iter()
        .filter_map(|l| l.strip_prefix("option name ").map(str::to_string))
        .collect();
    for doc in ["README.md", "docs/uci.md"] {
        let text = repo_file(doc);
        let rows: Vec<String> = text
            .lines()
            .filter(|l| l.starts_with("| `"))
            .filter_map(|row| {
                let cells: Vec<&str> = row.split('|').map(str::trim).collect();
                let name = cells[1].trim_matches('`');
                // Only the option table's rows: a type in the second column.
                if !["spin", "check", "button", "string"].contains(&cells[2]) {
                    return None;
                }
                let mut line = format!("{name} type {}", cells[2]);
                let default = cells[3].trim_matches('`');
                if !default.is_empty() {
                    line += &format!(" default {default}");
                }
                if let Some((min, max)) = cells[4].split_once(" to ") {
                    line += &format!(" min {min} max {max}");
                }
                Some(line)
            })
            .collect();
        assert_eq!(rows, listing, "{doc}'s option table");
    }
    let answer = e.ask("setoption name Hash value -5");
    let said = answer[0].strip_prefix("info string ").expect("an info string");
    assert!(
        repo_file("docs/uci.md").contains(said),
        "docs/uci.md does not say what the engine says: {said}"
    );
}
