//! UCI transcripts through the binary: start-up, options, positions, every `go` form,
//! `stop` and `ponderhit` while searching, mates, game ends, and bad input.

mod common;

use std::time::{Duration, Instant};

use common::engine::{best_move, last_info, says, Engine};

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
    let mut e = Engine::start();
    e.send("uci");
    let lines = e.read_until(10 * SECOND, |l| l == "uciok");
    assert!(lines[0].starts_with("id name Nue"), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("id author")));
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
        "option name SyzygyPath type string default",
    ] {
        assert!(lines.iter().any(|l| l.starts_with(option)), "missing '{option}' in {lines:?}");
    }
    assert!(e.ask("").is_empty());
    assert_eq!(e.quit(), Some(0));
}

#[test]
fn every_option_can_be_set() {
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
        ("setoption name UCI_ShowWDL value true", Some("not implemented yet")),
        ("setoption name SyzygyPath value /nonexistent/tb", Some("not implemented yet")),
        ("setoption name SyzygyPath value <empty>", None),
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
    for k in 1..=3 {
        assert!(lines
            .iter()
            .any(|l| l.starts_with("info depth 6 ") && l.contains(&format!("multipv {k} "))));
    }
}

#[test]
fn bad_option_values_are_answered_and_change_nothing() {
    let mut e = started();
    for (command, answer) in [
        ("setoption name Hash value lots", "integer"),
        ("setoption name Hash value 0", "out of range"),
        ("setoption name Threads value 100000", "out of range"),
        ("setoption name Ponder value maybe", "true or false"),
        ("setoption name NoSuchOption value 1", "unknown option"),
        ("setoption Hash 16", "expected"),
        ("setoption name MultiPV", "needs a value"),
        ("setoption name EvalFile value /nonexistent/net.nnue", "keeping the net"),
        ("setoption name Hash value 1048576", "keeping a 1 MB table"),
    ] {
        let lines = e.ask(command);
        assert!(says(&lines, answer), "{command}: {lines:?}");
    }
    // A file that is not a net is refused with the loader's reason.
    let junk = std::env::temp_dir().join(format!("nue-junk-{}.nnue", std::process::id()));
    std::fs::write(&junk, vec![0u8; 1200]).unwrap();
    let lines = e.ask(&format!("setoption name EvalFile value {}", junk.display()));
    assert!(says(&lines, "unsupported version"), "{lines:?}");
    // The engine still plays with its default net.
    e.ask("position startpos");
    let lines = e.go("go depth 4", 10 * SECOND);
    assert!(last_info(&lines, "score").is_some());
}

#[test]
fn positions_with_moves_and_castling_notations() {
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
    for key in ["seldepth", "multipv", "nodes", "nps", "hashfull", "time", "pv"] {
        assert!(last_info(&lines, key).is_some(), "no {key} in {lines:?}");
    }
    // Node limits are exact with one thread.
    let lines = e.go("go nodes 5000", 20 * SECOND);
    let nodes: u64 =
        last_info(&lines, "nodes").unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(nodes <= 5000, "{nodes}");
}

#[test]
fn movetime_and_clock_are_respected() {
    let mut e = started();
    e.ask("position startpos");
    let start = Instant::now();
    e.go("go movetime 300", 10 * SECOND);
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(250) && took < Duration::from_millis(800), "{took:?}");
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
    e.read_until(SECOND, |l| l.starts_with("bestmove"));
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
    e.read_until(SECOND, |l| l.starts_with("bestmove"));
}

#[test]
fn ponder_then_ponderhit_or_stop() {
    let mut e = started();
    e.ask("setoption name Ponder value true");
    e.ask("position startpos moves e2e4 e7e5");
    // Pondering does not end on its own, even with little time on the clock.
    e.send("go ponder wtime 1000 btime 1000");
    assert!(e.drain(Duration::from_millis(400)).iter().all(|l| !l.starts_with("bestmove")));
    // After ponderhit, the clock runs: the move comes within the budget.
    let start = Instant::now();
    e.send("ponderhit");
    e.read_until(SECOND, |l| l.starts_with("bestmove"));
    assert!(start.elapsed() < Duration::from_millis(900));
    // A ponder miss: stop, then a new search.
    e.send("go ponder wtime 10000 btime 10000");
    std::thread::sleep(Duration::from_millis(100));
    e.send("stop");
    e.read_until(SECOND, |l| l.starts_with("bestmove"));
    e.ask("position startpos moves e2e4 c7c5");
    let lines = e.go("go wtime 1000 btime 1000", 5 * SECOND);
    assert_ne!(best_move(&lines), "(none)");
}

#[test]
fn mates_are_found_and_scored() {
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
    let mut e = started();
    e.ask("position startpos");
    let lines = e.ask("go perft 3");
    assert!(lines.contains(&"Nodes searched: 8902".to_string()), "{lines:?}");
    let lines = e.ask("eval");
    assert!(lines.iter().any(|l| l.starts_with("info string NNUE evaluation")), "{lines:?}");
}

#[test]
fn quit_while_searching_and_end_of_input() {
    let mut e = started();
    e.ask("position startpos");
    e.send("go infinite");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(e.quit(), Some(0));
}
