//! Opening books: the positions of an EPD file, or the final positions of the games of a
//! PGN file, for matches and data generation.

use std::path::Path;

use anyhow::{bail, Context, Result};
use shakmaty::{fen::Fen, CastlingMode, Chess};

use crate::{chain::Lines, pgn::PgnGame};

/// Every opening of `path`: one per EPD line (`.epd`), or the position each PGN game
/// (`.pgn`) ends in. Plain or gzip.
pub fn load(path: &Path) -> Result<Vec<Chess>> {
    let name = path.to_string_lossy().trim_end_matches(".gz").to_ascii_lowercase();
    let lines = Lines::open(path)?;
    let openings = if name.ends_with(".epd") {
        lines
            .filter(|l| !l.trim().is_empty())
            .enumerate()
            .map(|(i, l)| {
                epd_position(&l).with_context(|| format!("{} line {}", path.display(), i + 1))
            })
            .collect::<Result<Vec<_>>>()?
    } else if name.ends_with(".pgn") {
        pgn_positions(lines).with_context(|| format!("reading {}", path.display()))?
    } else {
        bail!("{}: an opening book must be an .epd or a .pgn file", path.display());
    };
    if openings.is_empty() {
        bail!("{} holds no openings", path.display());
    }
    Ok(openings)
}

/// The position of an EPD line: four FEN fields, then operations that are ignored.
fn epd_position(line: &str) -> Result<Chess> {
    let fields: Vec<&str> = line.split_ascii_whitespace().take(4).collect();
    if fields.len() < 4 {
        bail!("'{line}' is not an EPD position");
    }
    let fen = format!("{} 0 1", fields.join(" "));
    Ok(fen.parse::<Fen>()?.into_position(CastlingMode::Standard)?)
}

/// The final position of every game.
fn pgn_positions(lines: impl Iterator<Item = String>) -> Result<Vec<Chess>> {
    Ok(crate::pgn::games(lines)?.iter().map(PgnGame::end).collect())
}

#[cfg(test)]
mod tests {
    use shakmaty::Position;

    use super::*;

    #[test]
    fn pgn_games_end_where_their_main_line_ends() {
        let pgn =
            "[Event \"?\"]\n\n1. e4 {best by test} e5 (1... c5 2. Nf3) 2. Nf3 $1 Nc6 1/2-1/2\n\n\
                   [Event \"?\"]\n[FEN \"4k3/8/8/8/8/8/8/4K2R w K - 0 1\"]\n\n1. O-O Kd7 *\n";
        let games = pgn_positions(pgn.lines().map(String::from)).unwrap();
        assert_eq!(games.len(), 2);
        let fen = |p: &Chess| Fen::from_position(p, shakmaty::EnPassantMode::Legal).to_string();
        assert_eq!(
            fen(&games[0]),
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
        );
        assert_eq!(fen(&games[1]), "8/3k4/8/8/8/8/8/5RK1 w - - 2 2");
        assert!(pgn_positions(["1. e4 e4".to_string()].into_iter()).is_err());
    }

    #[test]
    fn epd_lines_ignore_their_operations() {
        let p = epd_position("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 id \"x\";")
            .unwrap();
        assert_eq!(p.legal_moves().len(), 20);
        assert!(epd_position("8/8/8").is_err());
    }
}
