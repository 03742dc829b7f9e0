//! Move-generation counts (`nue perft`, `go perft`): the number of leaf positions of the
//! full legal game tree to a fixed depth, the standard check of a move generator.

use std::io::{self, Write};

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

/// Writes the divide of `pos` at `depth` and the total, in UCI notation, to `out`.
pub fn print_divide(
    pos: &Chess,
    depth: u32,
    mode: CastlingMode,
    out: &mut impl Write,
) -> io::Result<u64> {
    let start = std::time::Instant::now();
    let counts = divide(pos, depth);
    let total = if depth == 0 { 1 } else { counts.iter().map(|&(_, n)| n).sum() };
    for (m, n) in counts {
        writeln!(out, "{}: {n}", m.to_uci(mode))?;
    }
    let secs = start.elapsed().as_secs_f64();
    writeln!(out)?;
    writeln!(out, "Nodes searched: {total}")?;
    writeln!(out, "Time: {:.3} s ({:.0} nodes/s)", secs, total as f64 / secs.max(1e-9))?;
    out.flush()?;
    Ok(total)
}
