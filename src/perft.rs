//! Move-generation counts (`nue perft`, `go perft`): the number of leaf positions of the
//! full legal game tree to a fixed depth, the standard check of a move generator.

use std::{
    io::{self, Write},
    sync::atomic::{AtomicBool, Ordering::Relaxed},
};

use shakmaty::{CastlingMode, Chess, Move, Position};

/// Leaf count of the legal game tree below `pos` at `depth`.
pub fn perft(pos: &Chess, depth: u32) -> u64 {
    match depth {
        0 => 1,
        // The last ply needs no positions, only the count of moves.
        1 => pos.legal_moves().len() as u64,
        _ => pos
            .legal_moves()
            .iter()
            .map(|&m| {
                let mut child = pos.clone();
                child.play_unchecked(m);
                perft(&child, depth - 1)
            })
            .sum(),
    }
}

/// Counts per root move ("divide"), in generation order, for finding generator bugs.
pub fn divide(pos: &Chess, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .iter()
        .map(|&m| {
            let mut child = pos.clone();
            child.play_unchecked(m);
            (m, perft(&child, depth - 1))
        })
        .collect()
}

/// Leaf count below `pos` at `depth`, or `None` when `stop` was set before it was done.
fn perft_until(pos: &Chess, depth: u32, stop: &AtomicBool) -> Option<u64> {
    if depth <= 2 {
        // Small enough to finish at once: the flag is read between such subtrees.
        return (!stop.load(Relaxed)).then(|| perft(pos, depth));
    }
    let mut total = 0;
    for &m in &pos.legal_moves() {
        let mut child = pos.clone();
        child.play_unchecked(m);
        total += perft_until(&child, depth - 1, stop)?;
    }
    Some(total)
}

/// Writes the divide of `pos` at `depth` and the total, in UCI notation, to `out`, each
/// root move's count as soon as it is known. When `stop` is set first, the root moves not
/// yet counted are left out and the last line says so. Returns the total of the moves
/// counted.
pub fn print_divide(
    pos: &Chess,
    depth: u32,
    mode: CastlingMode,
    out: &mut impl Write,
    stop: &AtomicBool,
) -> io::Result<u64> {
    let start = std::time::Instant::now();
    let moves = pos.legal_moves();
    let mut total = if depth == 0 { 1 } else { 0 };
    let mut counted = 0;
    if depth > 0 {
        for &m in &moves {
            let mut child = pos.clone();
            child.play_unchecked(m);
            let Some(n) = perft_until(&child, depth - 1, stop) else { break };
            writeln!(out, "{}: {n}", m.to_uci(mode))?;
            out.flush()?;
            total += n;
            counted += 1;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    writeln!(out)?;
    writeln!(out, "Nodes searched: {total}")?;
    writeln!(out, "Time: {:.3} s ({:.0} nodes/s)", secs, total as f64 / secs.max(1e-9))?;
    if depth > 0 && counted < moves.len() {
        writeln!(out, "Stopped: {counted} of {} root moves counted", moves.len())?;
    }
    out.flush()?;
    Ok(total)
}
