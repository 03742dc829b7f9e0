//! Small subcommands that print things: `nue eval`.

use std::path::Path;

use anyhow::{Context, Result};
use shakmaty::{fen::Fen, CastlingMode, Chess, Color, Position};

use crate::nnue::{default_network, internal_to_cp, simd::Simd, to_internal, Network};

/// `nue eval`: the network's view of one position.
pub fn eval(fen: Option<&str>, net: Option<&Path>) -> Result<()> {
    let pos: Chess = match fen {
        None => Chess::default(),
        Some(f) => f
            .parse::<Fen>()
            .with_context(|| format!("not a FEN: {f}"))?
            .into_position(CastlingMode::Standard)
            .with_context(|| format!("not a legal position: {f}"))?,
    };
    let net = match net {
        Some(p) => std::sync::Arc::from(Network::load(p)?),
        None => default_network(),
    };
    let raw = net.evaluate(Simd::detect(), pos.board(), pos.turn());
    let internal = to_internal(raw);
    let white = if pos.turn() == Color::White { internal } else { -internal };
    println!("raw network output: {raw} (side to move)");
    println!("NNUE value: {internal} internal units (side to move)");
    println!("evaluation: {:+.2} pawns (White's view)", f64::from(internal_to_cp(white)) / 100.0);
    Ok(())
}
