//! The search's answers, through the engine API: draws by repetition, the fifty-move
//! rule, stalemate and insufficient material inside the tree, a mate on the hundredth
//! half-move, tactics solved at a fixed node count, the same result twice, and Chess960
//! searches pinned to their node counts.

mod common;

use nue::{
    api::{Control, Limits, Outcome},
    engine::{parse_move, Engine},
    types::MATE_IN_MAX,
};
use shakmaty::{uci::UciMove, CastlingMode, Move, Position};

/// An engine at `fen` after `moves` (UCI notation).
fn engine_at(fen: &str, moves: &[&str]) -> Engine {
    let mut engine = Engine::new(16).unwrap();
    let root = common::position(fen);
    let mut pos = root.clone();
    let played: Vec<Move> = moves
        .iter()
        .map(|m| {
            let m = parse_move(&pos, m).unwrap_or_else(|| panic!("{m} is illegal"));
            pos.play_unchecked(m);
            m
        })
        .collect();
    engine.set_position(root, &played);
    engine
}

fn search(engine: &mut Engine, limits: Limits) -> Outcome {
    engine.go(&limits, &Control::default(), &mut |_| {})
}

fn depth(d: u32) -> Limits {
    Limits { depth: Some(d), ..Limits::default() }
}

fn uci(m: Option<Move>) -> String {
    m.map_or("(none)".into(), |m| UciMove::from_move(m, CastlingMode::Standard).to_string())
}

/// A draw scores 0, give or take the ±1 of noise the search adds to draw scores.
fn assert_draw(outcome: &Outcome, what: &str) {
    assert!(outcome.score.abs() <= 1, "{what}: score {} for {}", outcome.score, uci(outcome.best));
}

#[test]
fn a_lost_side_takes_the_threefold_repetition_the_game_offers() {
    // Black, a queen down, has shuffled knights with White twice; moving the knight back
    // makes the start position appear a third time.
    let fen = "rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    let moves = ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"];
    let outcome = search(&mut engine_at(fen, &moves), depth(6));
    assert_eq!(uci(outcome.best), "f6g8");
    assert_draw(&outcome, "threefold repetition");
}

#[test]
fn a_capture_that_stalemates_is_seen_as_a_draw() {
    // Taking the bishop leaves Black without a move: stalemate, so White keeps it alive
    // and wins otherwise.
    for (fen, stalemating) in
        [("7K/8/7k/5b2/8/8/8/1Q6 w - - 0 1", "b1f5"), ("5k1K/1b3P2/8/8/8/8/8/7Q w - - 0 1", "h1b7")]
    {
        let outcome = search(&mut engine_at(fen, &[]), depth(10));
        assert_ne!(uci(outcome.best), stalemating, "{fen}");
        assert!(outcome.score > 2 * 208, "{fen}: score {}", outcome.score);
    }
}

#[test]
fn the_fifty_move_rule_draws_inside_the_tree_but_a_mate_on_the_hundredth_ply_counts() {
    // White, a queen down, has one king move left before the fifty-move rule.
    let outcome = search(&mut engine_at("8/8/8/8/8/2k5/3q4/7K w - - 99 80", &[]), depth(8));
    assert_draw(&outcome, "fifty-move rule");
    // Mate delivered with the hundredth half-move is still mate.
    let outcome = search(&mut engine_at("6k1/5ppp/8/8/8/8/8/R5K1 w - - 99 80", &[]), depth(6));
    assert_eq!(uci(outcome.best), "a1a8");
    assert!(outcome.score >= MATE_IN_MAX, "score {}", outcome.score);
}

#[test]
fn insufficient_material_is_a_draw_whatever_the_net_thinks() {
    // A lone knight cannot mate.
    let outcome = search(&mut engine_at("8/8/8/4k3/8/8/3NK3/8 w - - 0 1", &[]), depth(8));
    assert_draw(&outcome, "king and knight against king");
    // A bishop against a blocked pawn: every line ends with the pawn taken, leaving king
    // and bishop against king.
    let outcome = search(&mut engine_at("8/8/8/8/8/5k2/3p4/3K1B2 w - - 0 1", &[]), depth(8));
    assert_draw(&outcome, "king and bishop against king");
}

/// Positions from Win At Chess (Reinfeld) with their best moves. Each is solved here in
/// under 20,000 nodes, a tenth of the limit the test allows.
const TACTICS: [(&str, &str); 10] = [
    ("5rk1/1ppb3p/p1pb4/6q1/3P1p1r/2P1R2P/PP1BQ1P1/5RKN w - - 0 1", "e3g3"),
    ("r1bq2rk/pp3pbp/2p1p1pQ/7P/3P4/2PB1N2/PP3PPR/2KR4 w - - 0 1", "h6h7"),
    ("5k2/6pp/p1qN4/1p1p4/3P4/2PKP2Q/PP3r2/3R4 b - - 0 1", "c6c4"),
    ("7k/p7/1R5K/6r1/6p1/6P1/8/8 w - - 0 1", "b6b7"),
    ("rnbqkb1r/pppp1ppp/8/4P3/6n1/7P/PPPNPPP1/R1BQKBNR b KQkq - 0 1", "g4e3"),
    ("r4q1k/p2bR1rp/2p2Q1N/5p2/5p2/2P5/PP3PPP/R5K1 w - - 0 1", "e7f7"),
    ("3q1rk1/p4pp1/2pb3p/3p4/6Pr/1PNQ4/P1PB1PP1/4RRK1 b - - 0 1", "d6h2"),
    ("2br2k1/2q3rn/p2NppQ1/2p1P3/Pp5R/4P3/1P3PPP/3R2K1 w - - 0 1", "h4h7"),
    ("4k1r1/2p3r1/1pR1p3/3pP2p/3P2qP/P4N2/1PQ4P/5R1K b - - 0 1", "g4f3"),
    ("R7/P4k2/8/8/8/8/r7/6K1 w - - 0 1", "a8h8"),
];

#[test]
fn tactics_are_solved_at_a_fixed_node_count() {
    let limits = Limits { nodes: Some(200_000), ..Limits::default() };
    for (fen, best) in TACTICS {
        let outcome = search(&mut engine_at(fen, &[]), limits.clone());
        assert_eq!(uci(outcome.best), best, "{fen}");
    }
}

#[test]
fn a_search_on_one_thread_gives_the_same_result_twice() {
    let fen = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";
    let limits = Limits { nodes: Some(150_000), ..Limits::default() };
    let first = search(&mut engine_at(fen, &[]), limits.clone());
    let second = search(&mut engine_at(fen, &[]), limits);
    assert_eq!(
        (first.best, first.score, first.depth, first.nodes),
        (second.best, second.score, second.depth, second.nodes)
    );
}

/// Fixed-depth searches of Chess960 positions (castling rights on both wings, a castling
/// move chosen) keep their node counts, as the bench keeps its own: the counts were the
/// same with the search on shakmaty's `Chess` (`24294a0`) and on its own position, so a
/// change to the position or the generation that castles differently moves them.
#[test]
fn chess960_searches_keep_their_node_counts() {
    let pinned = [
        ("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", 399_374, "c2c4"),
        ("2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w HEhe - 1 9", 136_789, "e3e4"),
        ("b1q1rrkb/pppppppp/3nn3/8/P7/1PPP4/4PPPP/BQNNRKRB w GE - 1 9", 141_546, "f1g1"),
        ("qn1rbbkr/ppp2p1p/1n1pp1p1/8/3P4/P6P/1PP1PPPK/QNNRBB1R w hd - 2 9", 179_447, "e2e4"),
    ];
    for (fen, nodes, best) in pinned {
        let mut engine = Engine::new(16).unwrap();
        let root = nue::engine::parse_position(fen, CastlingMode::Chess960).unwrap();
        engine.set_position(root, &[]);
        let outcome = search(&mut engine, depth(13));
        let played = UciMove::from_move(outcome.best.unwrap(), CastlingMode::Chess960);
        assert_eq!((outcome.nodes, played.to_string()), (nodes, best.to_string()), "{fen}");
    }
}
