//! Reading PGN games: the start position (the `FEN` tag or the standard one), the players,
//! the result, and the main line's moves each with the comment after it. Tournament
//! managers write an engine's score into that comment (`{+0.78/16 1.076s}` by fastchess
//! and cutechess-cli, `{book}` for an opening move), which [`comment_score`] reads.
//! Variations, NAGs and move numbers are skipped.

use anyhow::{Context, Result};
use shakmaty::{fen::Fen, san::San, CastlingMode, Chess, Move, Position};

/// One game of a PGN file.
#[derive(Clone, Debug)]
pub struct PgnGame {
    /// The position the main line starts from.
    pub start: Chess,
    /// The `White` and `Black` tags (empty when missing).
    pub players: [String; 2],
    /// White's result (1.0, 0.5, 0.0), or `None` for `*` or no result.
    pub result: Option<f32>,
    /// The main line: each move with the text of the comment right after it.
    pub moves: Vec<(Move, Option<String>)>,
}

impl PgnGame {
    /// The position after the main line.
    pub fn end(&self) -> Chess {
        let mut pos = self.start.clone();
        for (m, _) in &self.moves {
            pos.play_unchecked(*m);
        }
        pos
    }
}

/// Every game of a PGN text, given as lines. A move that is not legal where it stands is
/// an error, with the game's number.
pub fn games(lines: impl Iterator<Item = String>) -> Result<Vec<PgnGame>> {
    let mut out = Vec::new();
    let mut tags: Vec<(String, String)> = Vec::new();
    let mut movetext = String::new();
    let mut finish = |tags: &mut Vec<(String, String)>, movetext: &mut String| -> Result<()> {
        if movetext.trim().is_empty() {
            return Ok(());
        }
        let game = parse_game(tags, movetext).with_context(|| format!("game {}", out.len() + 1))?;
        out.push(game);
        tags.clear();
        movetext.clear();
        Ok(())
    };
    for line in lines {
        let line = line.trim();
        if let Some(tag) = line.strip_prefix('[') {
            finish(&mut tags, &mut movetext)?;
            let (name, rest) = tag.split_once(' ').unwrap_or((tag, ""));
            let value = rest.trim().trim_end_matches(']').trim().trim_matches('"');
            tags.push((name.to_string(), value.to_string()));
        } else {
            movetext.push_str(line);
            movetext.push(' ');
        }
    }
    finish(&mut tags, &mut movetext)?;
    Ok(out)
}

fn parse_game(tags: &[(String, String)], movetext: &str) -> Result<PgnGame> {
    let tag = |name: &str| tags.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
    let start = match tag("FEN") {
        Some(fen) => fen.parse::<Fen>()?.into_position(CastlingMode::Standard)?,
        None => Chess::default(),
    };
    let mut game = PgnGame {
        start: start.clone(),
        players: [tag("White").unwrap_or("").to_string(), tag("Black").unwrap_or("").to_string()],
        result: tag("Result").and_then(parse_result),
        moves: Vec::new(),
    };
    let mut pos = start;
    let mut variations = 0usize;
    let mut rest = movetext;
    while let Some(c) = rest.chars().next() {
        match c {
            '{' => {
                let end = rest.find('}').unwrap_or(rest.len());
                let comment = rest[1..end].trim().to_string();
                rest = rest.get(end + 1..).unwrap_or("");
                if variations == 0 {
                    if let Some(last) = game.moves.last_mut() {
                        last.1.get_or_insert(comment);
                    }
                }
            }
            '(' => {
                variations += 1;
                rest = &rest[1..];
            }
            ')' => {
                variations = variations.saturating_sub(1);
                rest = &rest[1..];
            }
            c if c.is_whitespace() => rest = &rest[c.len_utf8()..],
            _ => {
                let end = rest.find(|c: char| c.is_whitespace() || "{}()".contains(c));
                let (token, after) = rest.split_at(end.unwrap_or(rest.len()));
                rest = after;
                if variations > 0 || token.starts_with('$') {
                    continue;
                }
                if let Some(result) = parse_result(token) {
                    game.result = game.result.or(Some(result));
                    break;
                }
                if token == "*" {
                    break;
                }
                let san = token.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
                if san.is_empty() {
                    continue;
                }
                let m = san
                    .parse::<San>()
                    .ok()
                    .and_then(|s| s.to_move(&pos).ok())
                    .with_context(|| format!("'{san}' is not a legal move"))?;
                pos.play_unchecked(m);
                game.moves.push((m, None));
            }
        }
    }
    Ok(game)
}

fn parse_result(text: &str) -> Option<f32> {
    match text {
        "1-0" => Some(1.0),
        "0-1" => Some(0.0),
        "1/2-1/2" => Some(0.5),
        _ => None,
    }
}

/// The score a tournament manager wrote into a move's comment, in centipawns from the
/// mover's point of view: `+0.78/16 1.076s` is 78. `None` for a mate (`+M13/26`), a book
/// move or a comment without a score.
pub fn comment_score(comment: &str) -> Option<i32> {
    let first = comment.split_whitespace().next()?;
    let (score, depth) = first.split_once('/')?;
    depth.parse::<u32>().ok()?;
    let pawns: f64 = score.parse().ok()?;
    Some((pawns * 100.0).round() as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn games_read_their_tags_moves_comments_and_result() {
        let pgn = "[Event \"?\"]\n[White \"nue\"]\n[Black \"other\"]\n[Result \"0-1\"]\n\n\
                   1. e4 {book} e5 {-0.35/12 0.5s} (1... c5 {x} 2. Nf3) 2. Nf3 $1 {+0.20/14 \
                   0.4s} Nc6 {+M3/20 0.1s} 0-1\n\n\
                   [Event \"?\"]\n[FEN \"4k3/8/8/8/8/8/8/4K2R w K - 0 1\"]\n\n1. O-O Kd7 *\n";
        let games = games(pgn.lines().map(String::from)).unwrap();
        assert_eq!(games.len(), 2);
        let g = &games[0];
        assert_eq!(g.players, ["nue".to_string(), "other".to_string()]);
        assert_eq!(g.result, Some(0.0));
        assert_eq!(g.moves.len(), 4);
        let comments: Vec<Option<&str>> = g.moves.iter().map(|(_, c)| c.as_deref()).collect();
        assert_eq!(
            comments,
            [Some("book"), Some("-0.35/12 0.5s"), Some("+0.20/14 0.4s"), Some("+M3/20 0.1s")]
        );
        let scores: Vec<Option<i32>> = comments.iter().map(|c| c.and_then(comment_score)).collect();
        assert_eq!(scores, [None, Some(-35), Some(20), None]);
        let fen = |p: &Chess| Fen::from_position(p, shakmaty::EnPassantMode::Legal).to_string();
        assert_eq!(
            fen(&g.end()),
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
        );
        assert_eq!(games[1].result, None);
        assert_eq!(fen(&games[1].end()), "8/3k4/8/8/8/8/8/5RK1 w - - 2 2");
        assert!(super::games(["1. e4 e4".to_string()].into_iter()).is_err());
    }
}
