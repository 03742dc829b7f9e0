//! Small subcommands that print things: `nue eval`, `nue perft`.

use std::{io::Write, path::Path};

use anyhow::Result;
use shakmaty::{CastlingMode, Chess, Color, Position};

use crate::{
    engine::parse_position,
    nnue::default_network,
    nnue::{internal_to_cp, simd::Simd, to_internal, Network},
};

fn position(fen: Option<&str>) -> Result<Chess> {
    match fen {
        None => Ok(Chess::default()),
        Some(f) => parse_position(f, CastlingMode::Standard).map_err(anyhow::Error::msg),
    }
}

/// `nue eval`: the network's view of one position.
pub fn eval(fen: Option<&str>, net: Option<&Path>) -> Result<()> {
    let pos = position(fen)?;
    let net = match net {
        Some(p) => std::sync::Arc::from(Network::load(p)?),
        None => default_network(),
    };
    let raw = net.evaluate(Simd::detect(), pos.board(), pos.turn());
    let internal = to_internal(raw);
    let white = if pos.turn() == Color::White { internal } else { -internal };
    let mut out = std::io::stdout().lock();
    writeln!(out, "raw network output: {raw} (side to move)")?;
    writeln!(out, "NNUE value: {internal} internal units (side to move)")?;
    let pawns = f64::from(internal_to_cp(white)) / 100.0;
    writeln!(out, "evaluation: {pawns:+.2} pawns (White's view)")?;
    Ok(())
}

/// `nue perft`: leaf counts per root move and in total.
pub fn perft(depth: u32, fen: Option<&str>) -> Result<()> {
    let pos = position(fen)?;
    crate::perft::print_divide(&pos, depth, pos.castles().mode(), &mut std::io::stdout().lock())?;
    Ok(())
}
