//! Whole games of the engine against itself at a fast time control, refereed here: every
//! move must be legal and arrive before its side's clock runs out, and each game must go
//! on to an end the rules define. Games follow one another, from the openings below,
//! until enough plies have been played on the clock; on one thread a side, and on two.

mod common;

use std::time::{Duration, Instant};

use common::engine::{best_move, Engine};
use nue::engine::{parse_move, parse_position};
use shakmaty::{zobrist::Zobrist64, CastlingMode, Color, EnPassantMode, Position};

/// Plays a game of the engine against itself at 2+0.02 from `fen`, both sides on
/// `threads` threads, and returns its plies and how it ended. Panics on an illegal move or
/// a time loss.
fn self_play(threads: usize, fen: &str) -> (usize, String) {
    let mut players = [Engine::start(), Engine::start()];
    for p in &mut players {
        p.send("uci");
        p.read_until(Duration::from_secs(10), |l| l == "uciok");
        p.ask("setoption name Hash value 8");
        p.ask(&format!("setoption name Threads value {threads}"));
        p.ask("ucinewgame");
    }
    let increment = 20u64;
    let mut clock = [2000u64, 2000u64];
    let mut pos = parse_position(fen, CastlingMode::Standard).expect("a legal opening");
    let mut moves: Vec<String> = Vec::new();
    let mut keys = vec![pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal)];
    let verdict = loop {
        if let Some(outcome) = pos.outcome().known() {
            break format!("{outcome:?}");
        }
        if pos.halfmoves() >= 100 {
            break "fifty-move rule".to_string();
        }
        let key = *keys.last().unwrap();
        if keys.iter().filter(|&&k| k == key).count() >= 3 {
            break "threefold repetition".to_string();
        }
        if moves.len() >= 400 {
            break "adjudicated after 400 plies".to_string();
        }
        let side = usize::from(pos.turn() == Color::Black);
        let player = &mut players[side];
        player.send(&format!("position fen {fen} moves {}", moves.join(" ")));
        let start = Instant::now();
        let lines = player.go(
            &format!("go wtime {} btime {} winc {increment} binc {increment}", clock[0], clock[1]),
            Duration::from_secs(10),
        );
        let used = start.elapsed().as_millis() as u64;
        assert!(
            used <= clock[side],
            "{:?} lost on time: used {used} ms of {} ms",
            pos.turn(),
            clock[side]
        );
        clock[side] = clock[side] - used + increment;
        let text = best_move(&lines);
        let m = parse_move(&pos, &text)
            .unwrap_or_else(|| panic!("illegal move {text} after {moves:?}"));
        pos.play_unchecked(m);
        keys.push(pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal));
        moves.push(text);
    };
    eprintln!("game over after {} plies: {verdict}; clocks {clock:?}", moves.len());
    (moves.len(), verdict)
}

/// Openings for the games: the start position first, then two unbalanced ones, so that
/// a game drawn early by repetition (legal chess in self-play) is followed by one that
/// is not played the same way.
const OPENINGS: [&str; 3] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkb1r/pp1p1ppp/4pn2/2p5/2PP4/5N2/PP2PPPP/RNBQKB1R w KQkq - 0 4",
    "r1bqkbnr/pp1ppp1p/2n3p1/2p5/4P3/2N3P1/PPPP1P1P/R1BQKBNR w KQkq - 0 4",
];

/// Plies played on the clock in all, over as many games as that takes: a game's worth,
/// so that the clock handling is exercised from a full clock down to its reserve.
const CLOCK_PLIES: usize = 60;

/// From a level opening neither side of a sound engine is mated within 20 moves: a
/// decisive game shorter than this means a broken search.
const SHORTEST_DECISIVE_GAME: usize = 40;

/// Self-play games on `threads` threads a side, from the openings in turn, until
/// [`CLOCK_PLIES`] plies have been played.
fn games_on_the_clock(threads: usize) {
    let mut played = 0;
    for fen in OPENINGS.iter().cycle().take(10) {
        let (plies, verdict) = self_play(threads, fen);
        assert!(
            plies >= SHORTEST_DECISIVE_GAME || !verdict.starts_with("Decisive"),
            "{fen}: mated after {plies} plies: {verdict}"
        );
        played += plies;
        if played >= CLOCK_PLIES {
            return;
        }
    }
    panic!("only {played} plies in ten games: every game ended almost at once");
}

#[test]
fn fast_games_against_itself_end_without_a_time_loss() {
    let _lock = common::timed();
    games_on_the_clock(1);
}

#[test]
fn fast_games_on_two_threads_a_side_end_without_a_time_loss() {
    let _lock = common::timed();
    games_on_the_clock(2);
}
