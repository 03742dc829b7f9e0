//! Whole games of the engine against itself at a fast time control, refereed here: every
//! move must be legal and arrive before its side's clock runs out, and the game must go
//! on to an end the rules define. One game on one thread a side, one on two.

mod common;

use std::time::{Duration, Instant};

use common::engine::{best_move, Engine};
use nue::engine::parse_move;
use shakmaty::{zobrist::Zobrist64, Chess, Color, EnPassantMode, Position};

/// Plays a game of the engine against itself at 2+0.02, both sides on `threads` threads,
/// and returns its plies and how it ended. Panics on an illegal move or a time loss.
fn self_play(threads: usize) -> (usize, String) {
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
    let mut pos = Chess::default();
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
        player.send(&format!("position startpos moves {}", moves.join(" ")));
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

/// From the start position, neither side of a sound engine blunders into mate or a
/// repetition within 20 moves; a game that ends sooner means a broken search or clock.
const SHORTEST_GAME: usize = 40;

#[test]
fn a_fast_game_against_itself_ends_without_a_time_loss() {
    let _lock = common::timed();
    let (plies, verdict) = self_play(1);
    assert!(plies >= SHORTEST_GAME, "game over after {plies} plies: {verdict}");
}

#[test]
fn a_fast_game_on_two_threads_a_side_ends_without_a_time_loss() {
    let _lock = common::timed();
    let (plies, verdict) = self_play(2);
    assert!(plies >= SHORTEST_GAME, "game over after {plies} plies: {verdict}");
}
