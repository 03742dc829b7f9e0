//! Game chains: whole games as training data, one game per line of a gzip file
//! (docs/chain-format.md).
//!
//! ```text
//! <start fen> | <result> | <move> <score> <move> <score> ...
//! ```
//!
//! The result is White's (`1.0`, `0.5`, `0.0`); each score, in centipawns from White's
//! point of view or `#` for a mate seen by the search, belongs to the position *before*
//! its move. Storing moves instead of a FEN per position takes about 4 bytes a position.
//!
//! [`ChainWriter`] appends each game as a gzip member of its own, so a run that is killed
//! loses only the games it had not finished; [`Game::parse`] reads a line back, checking
//! every move for legality.

use std::{
    fmt::Write as _,
    fs::{File, OpenOptions},
    io::{BufRead, BufReader, Read, Write},
    path::{Path, PathBuf},
};

use anyhow::{Context, Result};
use flate2::{read::MultiGzDecoder, write::GzEncoder, Compression};
use shakmaty::{fen::Fen, uci::UciMove, CastlingMode, Chess, Color, EnPassantMode, Move, Position};

/// One recorded ply: the move played and the search's score of the position it was
/// played from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ply {
    /// The move.
    pub mv: Move,
    /// Centipawns from White's point of view; `None` when the search saw a forced mate.
    pub score: Option<i32>,
}

/// A game as a chain stores it.
#[derive(Clone, Debug, PartialEq)]
pub struct Game {
    /// The position the recorded moves start from.
    pub start: Chess,
    /// White's result: 1.0, 0.5 or 0.0.
    pub result: f32,
    /// The moves, in order, each with its score.
    pub plies: Vec<Ply>,
}

/// Why a chain line was not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChainError {
    /// Not three `|`-separated fields.
    Layout,
    /// The start FEN is not a legal position.
    Fen,
    /// The result is not `1.0`, `0.5` or `0.0`.
    Result,
    /// A move that is not legal where it stands, or is not UCI at all (ply index).
    Move(usize),
    /// A score that is neither an integer nor `#` (ply index).
    Score(usize),
    /// A move without its score.
    Unpaired,
}

impl std::fmt::Display for ChainError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChainError::Layout => write!(f, "not '<fen> | <result> | <moves and scores>'"),
            ChainError::Fen => write!(f, "the start FEN is not a legal position"),
            ChainError::Result => write!(f, "the result is not 1.0, 0.5 or 0.0"),
            ChainError::Move(i) => write!(f, "move {} is not a legal UCI move", i + 1),
            ChainError::Score(i) => write!(f, "score {} is neither an integer nor '#'", i + 1),
            ChainError::Unpaired => write!(f, "the last move has no score"),
        }
    }
}

impl Game {
    /// Reads one chain line, replaying every move to check that it is legal.
    pub fn parse(line: &str) -> Result<Game, ChainError> {
        let mut fields = line.splitn(3, '|').map(str::trim);
        let (Some(fen), Some(result), Some(plies)) = (fields.next(), fields.next(), fields.next())
        else {
            return Err(ChainError::Layout);
        };
        let start: Chess = fen
            .parse::<Fen>()
            .map_err(|_| ChainError::Fen)?
            .into_position(CastlingMode::Standard)
            .map_err(|_| ChainError::Fen)?;
        let result = match result {
            "1.0" | "1" => 1.0,
            "0.5" => 0.5,
            "0.0" | "0" => 0.0,
            _ => return Err(ChainError::Result),
        };
        let mut pos = start.clone();
        let mut out = Vec::new();
        let mut tokens = plies.split_ascii_whitespace();
        while let Some(mv) = tokens.next() {
            let i = out.len();
            let score = tokens.next().ok_or(ChainError::Unpaired)?;
            let mv = mv
                .parse::<UciMove>()
                .ok()
                .and_then(|u| u.to_move(&pos).ok())
                .ok_or(ChainError::Move(i))?;
            let score = match score {
                "#" => None,
                s => Some(s.parse::<i32>().map_err(|_| ChainError::Score(i))?),
            };
            pos.play_unchecked(mv);
            out.push(Ply { mv, score });
        }
        Ok(Game { start, result, plies: out })
    }

    /// The game as one chain line (no newline).
    pub fn to_line(&self) -> String {
        let fen = Fen::from_position(&self.start, EnPassantMode::Legal);
        let result = match self.result {
            r if r > 0.75 => "1.0",
            r if r < 0.25 => "0.0",
            _ => "0.5",
        };
        let mut line = format!("{fen} | {result} |");
        for ply in &self.plies {
            let mv = ply.mv.to_uci(CastlingMode::Standard);
            match ply.score {
                Some(s) => write!(line, " {mv} {s}"),
                None => write!(line, " {mv} #"),
            }
            .expect("writing to a String cannot fail");
        }
        line
    }

    /// Every recorded position with its ply, in order: (position, the ply played there).
    pub fn positions(&self) -> impl Iterator<Item = (Chess, Ply)> + '_ {
        let mut pos = self.start.clone();
        self.plies.iter().map(move |&ply| {
            let before = pos.clone();
            pos.play_unchecked(ply.mv);
            (before, ply)
        })
    }

    /// The position after the last recorded move.
    pub fn end(&self) -> Chess {
        let mut pos = self.start.clone();
        for ply in &self.plies {
            pos.play_unchecked(ply.mv);
        }
        pos
    }

    /// The result from `color`'s point of view.
    pub fn result_for(&self, color: Color) -> f32 {
        match color {
            Color::White => self.result,
            Color::Black => 1.0 - self.result,
        }
    }
}

/// Appends games to a chain file, one gzip member per game, flushed as it is written
/// (or other whole lines to a gzip file, one member per write).
pub struct ChainWriter {
    file: File,
    path: PathBuf,
}

impl ChainWriter {
    /// Opens `path` for appending, creating it (and its folder) when needed.
    pub fn append(path: &Path) -> Result<ChainWriter> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open {} for appending", path.display()))?;
        Ok(ChainWriter { file, path: path.to_path_buf() })
    }

    /// Writes one game as a complete gzip member in a single write.
    pub fn write(&mut self, game: &Game) -> Result<()> {
        self.write_text(&(game.to_line() + "\n"))
    }

    /// Writes `text` (whole lines) as a complete gzip member in a single write.
    pub fn write_text(&mut self, text: &str) -> Result<()> {
        let mut gz = GzEncoder::new(Vec::new(), Compression::default());
        gz.write_all(text.as_bytes())?;
        let bytes = gz.finish()?;
        self.file
            .write_all(&bytes)
            .and_then(|()| self.file.flush())
            .with_context(|| format!("cannot write to {}", self.path.display()))
    }
}

/// Lines of a text file, plain or gzip (recognised by its first bytes, whatever its
/// name), read in order. A gzip stream cut short (a run killed while writing) or bytes
/// that are not text end the lines early and are reported by [`Lines::problem`], rather
/// than failing the whole file.
pub struct Lines {
    inner: std::io::Lines<BufReader<Box<dyn Read + Send>>>,
    problem: Option<std::io::ErrorKind>,
}

/// The first two bytes of every gzip stream (RFC 1952).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

impl Lines {
    /// Opens `path`.
    pub fn open(path: &Path) -> Result<Lines> {
        let open = || File::open(path).with_context(|| format!("cannot open {}", path.display()));
        let mut magic = [0u8; 2];
        let gzip = open()?.read_exact(&mut magic).is_ok() && magic == GZIP_MAGIC;
        let reader: Box<dyn Read + Send> =
            if gzip { Box::new(MultiGzDecoder::new(open()?)) } else { Box::new(open()?) };
        Ok(Lines { inner: BufReader::with_capacity(1 << 20, reader).lines(), problem: None })
    }

    /// Why the lines ended before the end of the file, in words: `None` when they did not.
    pub fn problem(&self) -> Option<&'static str> {
        self.problem.map(|kind| match kind {
            std::io::ErrorKind::UnexpectedEof => "the file ends in a cut-off gzip member",
            std::io::ErrorKind::InvalidData => "the file holds bytes that are not UTF-8 text",
            _ => "the file could not be read to its end",
        })
    }
}

impl Iterator for Lines {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        if self.problem.is_some() {
            return None;
        }
        match self.inner.next()? {
            Ok(line) => Some(line),
            Err(e) => {
                self.problem = Some(e.kind());
                None
            }
        }
    }
}

/// The two line layouts of training data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Game chains: `<fen> | <result> | <move> <score> ...`.
    Chain,
    /// One position a line: `<fen> | <score> | <result>`.
    Positions,
}

impl Layout {
    /// The layout of one data line: a chain line's third field is empty or starts with a
    /// move, a position line's is a result.
    pub fn of_line(line: &str) -> Layout {
        let third = line.splitn(3, '|').nth(2).map(str::trim);
        match third {
            Some("") => Layout::Chain,
            Some(plies) => {
                let first = plies.split_ascii_whitespace().next().unwrap_or_default();
                if first.parse::<UciMove>().is_ok() {
                    Layout::Chain
                } else {
                    Layout::Positions
                }
            }
            None => Layout::Positions,
        }
    }

    /// The layout of a data file, read from its first non-empty line (plain or gzip, the
    /// name does not matter); an empty file reads as positions.
    pub fn of_file(path: &Path) -> Result<Layout> {
        let first = Lines::open(path)?.find(|l| !l.trim().is_empty());
        Ok(first.map_or(Layout::Positions, |l| Layout::of_line(&l)))
    }
}

/// Number of games (non-empty lines) in a chain file; 0 when it does not exist.
pub fn count_games(path: &Path) -> Result<u64> {
    if !path.exists() {
        return Ok(0);
    }
    Ok(Lines::open(path)?.filter(|l| !l.trim().is_empty()).count() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 0.5 | e2e4 30 e7e5 -25 g1f3 28 b8c6 #";

    #[test]
    fn a_line_round_trips() {
        let game = Game::parse(LINE).unwrap();
        assert_eq!(game.plies.len(), 4);
        assert_eq!(game.plies[1].score, Some(-25));
        assert_eq!(game.plies[3].score, None);
        assert_eq!(game.result, 0.5);
        assert_eq!(game.to_line(), LINE);
        let positions: Vec<_> = game.positions().collect();
        assert_eq!(positions[0].0, Chess::default());
        assert_eq!(positions[2].0.turn(), Color::White);
        assert_eq!(game.end().fullmoves().get(), 3);
    }

    #[test]
    fn layouts_are_told_apart_by_content() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        assert_eq!(Layout::of_line(LINE), Layout::Chain);
        assert_eq!(Layout::of_line(&format!("{start} | 1.0 |")), Layout::Chain);
        assert_eq!(Layout::of_line(&format!("{start} | 35 | 1.0")), Layout::Positions);
        assert_eq!(Layout::of_line(&format!("{start} | 0 | 0.5")), Layout::Positions);

        // A chain file named like neither layout, gzip or not, and a plain positions file.
        let dir = std::env::temp_dir().join(format!("nue-layout-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut w = ChainWriter::append(&dir.join("x")).unwrap();
        w.write(&Game::parse(LINE).unwrap()).unwrap();
        assert_eq!(Layout::of_file(&dir.join("x")).unwrap(), Layout::Chain);
        std::fs::write(dir.join("y.txt"), format!("\n{LINE}\n")).unwrap();
        assert_eq!(Layout::of_file(&dir.join("y.txt")).unwrap(), Layout::Chain);
        std::fs::write(dir.join("z.chain.txt"), format!("{start} | 35 | 1.0\n")).unwrap();
        assert_eq!(Layout::of_file(&dir.join("z.chain.txt")).unwrap(), Layout::Positions);
        let lines: Vec<String> = Lines::open(&dir.join("x")).unwrap().collect();
        assert_eq!(lines, vec![LINE.to_string()]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn broken_lines_say_what_is_wrong() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        assert_eq!(Game::parse("e2e4 30"), Err(ChainError::Layout));
        assert_eq!(Game::parse("nonsense | 1.0 | e2e4 3"), Err(ChainError::Fen));
        assert_eq!(Game::parse(&format!("{start} | 2 | e2e4 3")), Err(ChainError::Result));
        assert_eq!(Game::parse(&format!("{start} | 1.0 | e2e5 3")), Err(ChainError::Move(0)));
        assert_eq!(
            Game::parse(&format!("{start} | 1.0 | e2e4 3 e2e4 3")),
            Err(ChainError::Move(1))
        );
        assert_eq!(Game::parse(&format!("{start} | 1.0 | e2e4 x")), Err(ChainError::Score(0)));
        assert_eq!(Game::parse(&format!("{start} | 1.0 | e2e4 3 e7e5")), Err(ChainError::Unpaired));
        // Castling is written king to destination and read in either form.
        let castle = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1 | 1.0 | e1g1 10 e8c8 -5";
        assert_eq!(Game::parse(castle).unwrap().to_line(), castle);
    }

    #[test]
    fn appended_games_read_back_and_a_cut_tail_is_reported() {
        let dir = std::env::temp_dir().join(format!("nue-chain-{}", std::process::id()));
        let path = dir.join("t.chain.txt.gz");
        let _ = std::fs::remove_file(&path);
        let game = Game::parse(LINE).unwrap();
        for _ in 0..2 {
            let mut w = ChainWriter::append(&path).unwrap();
            w.write(&game).unwrap();
        }
        assert_eq!(count_games(&path).unwrap(), 2);
        let lines: Vec<String> = Lines::open(&path).unwrap().collect();
        assert_eq!(lines, vec![LINE.to_string(), LINE.to_string()]);

        // Cut the file in the middle of the second member.
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() * 3 / 4]).unwrap();
        let mut lines = Lines::open(&path).unwrap();
        assert_eq!(lines.next().as_deref(), Some(LINE));
        assert_eq!(lines.next(), None);
        assert_eq!(lines.problem(), Some("the file ends in a cut-off gzip member"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
