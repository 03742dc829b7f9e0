//! Syzygy tablebases: every probe of the oracle's 200 positions, won endings converted
//! inside the fifty-move rule, and the UCI options with good and bad paths.

mod common;

use std::time::Duration;

use common::engine::last_info;

use nue::{
    api::{Control, Limits},
    engine::Engine,
    syzygy::Tablebases,
    types::{MATE_IN_MAX, TB_WIN_IN_MAX},
};
use shakmaty::{Chess, Position};
use shakmaty_syzygy::Wdl;

/// The tables' folder, or `None` (the test is skipped) when they are missing.
fn tables_dir() -> Option<String> {
    Some(common::shared("syzygy")?.to_str().unwrap().to_string())
}

fn tables() -> Option<Tablebases> {
    Some(Tablebases::open(&tables_dir()?).unwrap())
}

/// `endgame.epd`: `<4 FEN fields> wdl_table W; wdl W; dtz D;`.
#[test]
fn every_oracle_position_probes_to_its_wdl_and_dtz() {
    let (Some(tb), Some(oracle)) = (tables(), common::shared("syzygy/endgame.epd")) else {
        return;
    };
    assert_eq!(tb.max_pieces(), 4);
    let text = std::fs::read_to_string(oracle).unwrap();
    let mut checked = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let pos = common::position(&format!("{} 0 1", fields[..4].join(" ")));
        let value = |key: &str| -> i32 {
            let at = line.find(&format!(" {key} ")).unwrap() + key.len() + 2;
            line[at..].split(';').next().unwrap().trim().parse().unwrap()
        };
        let wdl = tb.wdl_after_zeroing(&pos).unwrap();
        assert_eq!(wdl as i32, value("wdl"), "{line}");
        assert_eq!(tb.dtz(&pos).unwrap(), value("dtz"), "{line}");
        checked += 1;
    }
    assert_eq!(checked, 200);
}

/// An engine probing the tables; `None` (the test is skipped) when they are missing.
fn engine_with_tables() -> Option<Engine> {
    let mut engine = Engine::new(16).unwrap();
    engine.set_syzygy_path(&tables_dir()?).unwrap();
    Some(engine)
}

/// Plays `fen` out between two engines that probe the tables, `nodes` a move, and
/// returns the final position and the most plies without a capture or pawn move.
fn play_out(fen: &str, nodes: u64) -> (Chess, u32) {
    let mut engine = engine_with_tables().expect("the caller checked for the tables");
    let root = common::position(fen);
    let mut moves = Vec::new();
    let mut pos = root.clone();
    let mut longest = 0;
    while !pos.is_game_over() && moves.len() < 300 {
        engine.set_position(root.clone(), &moves);
        let limits = Limits { nodes: Some(nodes), ..Limits::default() };
        let outcome = engine.go(&limits, &Control::default(), &mut |_| {});
        let m = outcome.best.unwrap();
        pos.play_unchecked(m);
        moves.push(m);
        longest = longest.max(pos.halfmoves());
    }
    (pos, longest)
}

#[test]
fn won_endings_are_mated_inside_the_fifty_move_rule() {
    let Some(tb) = tables() else { return };
    for fen in [
        "8/8/8/4k3/8/8/8/4K2Q w - - 0 1",   // KQvK
        "8/8/3k4/8/8/8/8/R3K3 w - - 0 1",   // KRvK
        "8/8/8/3k4/8/8/8/2B1KN2 w - - 0 1", // KBNvK: up to 33 moves against the best defence
        "8/8/8/3k4/8/2r5/7Q/4K3 w - - 0 1", // KQvKR
    ] {
        let start = common::position(fen);
        assert_eq!(tb.wdl_after_zeroing(&start), Some(Wdl::Win), "{fen} is not a win");
        let (end, longest) = play_out(fen, 2_000);
        assert!(end.is_checkmate(), "{fen}: no mate, the game ended in {}", end.board());
        assert_eq!(end.turn(), !start.turn(), "{fen}: the wrong side was mated");
        assert!(longest < 100, "{fen}: {longest} plies without progress");
    }
}

#[test]
fn searches_report_the_tables_verdict_and_their_probes() {
    let Some(mut engine) = engine_with_tables() else { return };
    let limits = Limits { depth: Some(8), ..Limits::default() };
    let search = |engine: &mut Engine, fen: &str| {
        engine.new_game();
        engine.set_position(common::position(fen), &[]);
        let mut last = None;
        let outcome = engine.go(&limits, &Control::default(), &mut |r| last = Some(r.clone()));
        (outcome, last.unwrap())
    };
    // Won: a tablebase win, below the mates.
    let (outcome, report) = search(&mut engine, "8/8/3k4/8/8/8/8/R3K3 w - - 0 1");
    assert!(outcome.score >= TB_WIN_IN_MAX && outcome.score < MATE_IN_MAX, "{}", outcome.score);
    assert!(report.tbhits > 0);
    // Lost, and a draw the search can only find through a probe after a capture.
    let (outcome, _) = search(&mut engine, "8/8/3k4/8/8/8/8/r3K3 w - - 0 1");
    assert!(outcome.score <= -TB_WIN_IN_MAX, "{}", outcome.score);
    let (outcome, report) = search(&mut engine, "8/8/8/4k3/8/8/1r6/R3K3 w - - 0 1");
    assert_eq!(outcome.score, 0);
    assert!(report.tbhits > 0);
    // A mate in one is still a mate.
    let (outcome, _) = search(&mut engine, "3k4/8/3K4/8/8/8/8/7R w - - 0 1");
    assert!(outcome.score >= MATE_IN_MAX, "{}", outcome.score);
    // Five pieces, beyond these tables at the root; the capture of the b-pawn leads into
    // them, and the probe after it is what tells the search it wins.
    let (outcome, report) = search(&mut engine, "8/8/3k4/8/8/1p6/1P6/R3K3 w - - 0 1");
    assert!(outcome.score >= TB_WIN_IN_MAX && outcome.score < MATE_IN_MAX, "{}", outcome.score);
    assert!(report.tbhits > 0);
    // Without tables, no probes.
    engine.set_syzygy_path("").unwrap();
    let (_, report) = search(&mut engine, "8/8/3k4/8/8/8/8/R3K3 w - - 0 1");
    assert_eq!(report.tbhits, 0);
}

/// A node whose tablebase win bounds its score from below has a score before its first
/// move, so pruning may skip every move; that is not stalemate. Here Black's only move
/// takes the rook, after which White (bishop, knight) has no capture and no check: every
/// move is quiet and futile against a win already in hand.
#[test]
fn a_won_node_whose_moves_were_all_pruned_is_still_won() {
    let (Some(mut engine), Some(tb)) = (engine_with_tables(), tables()) else { return };
    let pos = common::position("R2B4/1k6/8/3K4/8/8/8/7N b - - 0 1");
    assert_eq!(pos.legal_moves().len(), 1);
    let mut after = pos.clone();
    after.play_unchecked(pos.legal_moves()[0]);
    assert_eq!(tb.wdl_after_zeroing(&after), Some(Wdl::Win));
    engine.set_position(pos, &[]);
    let limits = Limits { depth: Some(6), ..Limits::default() };
    let outcome = engine.go(&limits, &Control::default(), &mut |_| {});
    assert!(outcome.score <= -TB_WIN_IN_MAX, "{}", outcome.score);
}

#[test]
fn uci_options_take_good_paths_and_answer_bad_ones() {
    let _lock = common::untimed();
    let Some(tables) = tables_dir() else { return };
    let mut e = common::engine::Engine::start();
    let listing = e.ask("uci");
    for option in [
        "option name SyzygyPath type string default <empty>",
        "option name SyzygyProbeDepth type spin default 1 min 1 max 100",
        "option name SyzygyProbeLimit type spin default 7 min 0 max 7",
        "option name Syzygy50MoveRule type check default true",
    ] {
        assert!(listing.iter().any(|l| l == option), "{option} not in {listing:?}");
    }
    let lines = e.ask("setoption name SyzygyPath value /nonexistent/syzygy");
    assert!(lines.iter().any(|l| l.contains("'/nonexistent/syzygy' is not a folder")), "{lines:?}");
    let empty = common::TempDir::new("no-tables");
    let lines = e.ask(&format!("setoption name SyzygyPath value {}", empty.display()));
    assert!(lines.iter().any(|l| l.contains("no Syzygy table files")), "{lines:?}");
    // Several folders, one of them empty.
    let lines = e.ask(&format!("setoption name SyzygyPath value {}:{tables}", empty.display()));
    assert!(
        lines.iter().any(|l| l == "info string found 70 Syzygy table files, up to 4 pieces"),
        "{lines:?}"
    );
    e.ask("position fen 8/8/3k4/8/8/8/8/R3K3 w - - 0 1");
    let lines = e.go("go depth 6", Duration::from_secs(20));
    let tbhits = last_info(&lines, "tbhits").unwrap();
    assert!(!tbhits.starts_with("0 "), "tbhits {tbhits}");
    // With a limit of 2 pieces nothing is probed.
    e.ask("setoption name SyzygyProbeLimit value 2");
    e.ask("ucinewgame");
    let lines = e.go("go depth 6", Duration::from_secs(20));
    let tbhits = last_info(&lines, "tbhits").unwrap();
    assert!(tbhits.starts_with("0 "), "tbhits {tbhits}");
    assert!(e.ask("setoption name SyzygyProbeLimit value 8")[0].contains("out of range"));
}

/// Fixed-depth searches that probe the tables keep their node counts, as the bench keeps
/// its own: the counts were the same with the search on shakmaty's `Chess` (`24294a0`)
/// and on its own position (which builds a `Chess` for each probe), so a change to the
/// probes or the positions they read moves them.
#[test]
fn searches_with_tables_keep_their_node_counts() {
    let Some(mut engine) = engine_with_tables() else { return };
    let pinned = [
        ("8/8/3k4/8/8/1p6/1P6/R3K3 w - - 0 1", 4_054, "a1a3"),
        ("8/8/8/4k3/8/8/1r6/R3K3 w - - 0 1", 137_108, "e1f1"),
        ("4k3/8/8/3p4/3P4/4K3/5R2/8 w - - 0 1", 4_771, "f2f5"),
        ("8/5pk1/8/8/8/2B5/5KP1/8 b - - 0 1", 155_113, "g7h6"),
    ];
    for (fen, nodes, best) in pinned {
        engine.new_game();
        engine.set_position(common::position(fen), &[]);
        let limits = Limits { depth: Some(16), ..Limits::default() };
        let outcome = engine.go(&limits, &Control::default(), &mut |_| {});
        let played = outcome.best.unwrap().to_uci(shakmaty::CastlingMode::Standard).to_string();
        assert_eq!((outcome.nodes, played), (nodes, best.to_string()), "{fen}");
    }
}
