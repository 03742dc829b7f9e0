//! Training data: the text format of `../shared/data`, a compact binary cache, and batches
//! of HalfKP features.
//!
//! Text lines are `<fen> | <score> | <result>`, the score in centipawns and the result
//! (1.0, 0.5, 0.0) both from White's point of view. Parsing FENs is the slow part, so
//! each input file is converted once into a cache of 32-byte [`Packed`] records next to
//! the other training outputs, and later runs read the cache.

use std::{
    fs::File,
    io::{BufRead, BufReader, BufWriter, Read, Write},
    path::{Path, PathBuf},
};

use anyhow::{bail, ensure, Context, Result};
use bytemuck::{Pod, Zeroable};
use flate2::read::MultiGzDecoder;
use rayon::prelude::*;
use shakmaty::{
    fen::Fen, Bitboard, Board, CastlingMode, Chess, Color, Piece, Position, Role, Square,
};

use crate::{
    nnue::{
        features::{self, MAX_ACTIVE},
        PAWN_VALUE,
    },
    rng::Rng,
};

/// One training position in 32 bytes: occupancy, a nibble per piece in square order, and
/// the labels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Packed {
    occupied: u64,
    /// Piece codes (`color * 8 + role`), two per byte, in ascending square order.
    pieces: [u8; 16],
    /// Search score in centipawns, White's point of view.
    score_cp: i16,
    /// Game result for White: 0 loss, 1 draw, 2 win.
    result: u8,
    /// 0 when White is to move, 1 when Black is.
    turn: u8,
    _reserved: u32,
}

const _: () = assert!(std::mem::size_of::<Packed>() == 32);

impl Packed {
    /// Packs a board with its labels; `None` when the board has more than 32 pieces or
    /// misses a king.
    pub fn new(board: &Board, turn: Color, score_cp: i32, result: f32) -> Option<Packed> {
        let occupied = board.occupied();
        if occupied.count() > 32
            || board.king_of(Color::White).is_none()
            || board.king_of(Color::Black).is_none()
        {
            return None;
        }
        let mut pieces = [0u8; 16];
        for (i, sq) in occupied.into_iter().enumerate() {
            let p = board.piece_at(sq)?;
            let code = u8::from(p.color == Color::Black) * 8 + p.role as u8;
            pieces[i / 2] |= code << (4 * (i % 2));
        }
        Some(Packed {
            occupied: occupied.0,
            pieces,
            score_cp: score_cp.clamp(i16::MIN as i32, i16::MAX as i32) as i16,
            result: (result * 2.0).round().clamp(0.0, 2.0) as u8,
            turn: u8::from(turn == Color::Black),
            _reserved: 0,
        })
    }

    /// The side to move.
    pub fn turn(&self) -> Color {
        if self.turn == 0 {
            Color::White
        } else {
            Color::Black
        }
    }

    /// The pieces with their squares.
    pub fn pieces(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        Bitboard(self.occupied).into_iter().enumerate().map(|(i, sq)| {
            let code = (self.pieces[i / 2] >> (4 * (i % 2))) & 15;
            let color = if code & 8 == 0 { Color::White } else { Color::Black };
            let role = Role::try_from(code & 7).unwrap_or(Role::Pawn);
            (sq, Piece { color, role })
        })
    }

    /// The board, for tools and tests.
    pub fn board(&self) -> Board {
        let mut board = Board::empty();
        for (sq, piece) in self.pieces() {
            board.set_piece_at(sq, piece);
        }
        board
    }

    /// Search score in internal units (208 per pawn) from the side to move's view.
    pub fn score(&self) -> f32 {
        let white = f32::from(self.score_cp) * PAWN_VALUE as f32 / 100.0;
        if self.turn == 0 {
            white
        } else {
            -white
        }
    }

    /// Game result from the side to move's view: 0, 0.5 or 1.
    pub fn result(&self) -> f32 {
        let white = f32::from(self.result) / 2.0;
        if self.turn == 0 {
            white
        } else {
            1.0 - white
        }
    }

    /// The active features of both perspectives, side to move first, and their count.
    pub fn features(&self) -> ([[u16; MAX_ACTIVE]; 2], usize) {
        self.features_mirrored(false)
    }

    /// The features of the position, or of its mirror image across the d/e file line when
    /// `mirror` is set. HalfKP cannot see castling rights, and without them chess is
    /// symmetric left to right, so a mirrored position is a second, equally valid example.
    pub fn features_mirrored(&self, mirror: bool) -> ([[u16; MAX_ACTIVE]; 2], usize) {
        let turn = self.turn();
        let pieces = || {
            self.pieces().map(move |(sq, p)| (if mirror { sq.flip_horizontal() } else { sq }, p))
        };
        let mut kings = [Square::A1; 2];
        for (sq, piece) in pieces() {
            if piece.role == Role::King {
                kings[usize::from(piece.color != turn)] = sq;
            }
        }
        let mut out = [[0u16; MAX_ACTIVE]; 2];
        let mut n = 0;
        for (sq, piece) in pieces().filter(|(_, p)| p.role != Role::King) {
            if n == MAX_ACTIVE {
                break;
            }
            for (side, perspective) in [turn, !turn].into_iter().enumerate() {
                out[side][n] = features::index(perspective, kings[side], piece, sq) as u16;
            }
            n += 1;
        }
        (out, n)
    }
}

/// Why a text line was not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reject {
    /// Not three `|`-separated fields, or a score or result that is not a number.
    Syntax,
    /// A FEN that shakmaty rejects, or a position the network cannot take.
    Position,
}

/// Parses one data line.
pub fn parse_line(line: &str) -> Result<Packed, Reject> {
    let mut fields = line.split('|').map(str::trim);
    let (Some(fen), Some(score), Some(result), None) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Err(Reject::Syntax);
    };
    let score: i32 = score.parse().map_err(|_| Reject::Syntax)?;
    let result: f32 = result.parse().map_err(|_| Reject::Syntax)?;
    if ![0.0, 0.5, 1.0].contains(&result) {
        return Err(Reject::Syntax);
    }
    let fen: Fen = fen.parse().map_err(|_| Reject::Position)?;
    let pos: Chess = fen.into_position(CastlingMode::Standard).map_err(|_| Reject::Position)?;
    Packed::new(pos.board(), pos.turn(), score, result).ok_or(Reject::Position)
}

/// What reading one file produced.
#[derive(Debug, Default, Clone, Copy)]
pub struct ReadStats {
    /// Lines turned into positions.
    pub kept: usize,
    /// Lines with a broken layout or numbers.
    pub bad_syntax: usize,
    /// Lines whose FEN is not a legal position.
    pub bad_position: usize,
}

/// Reads a text data file (plain or gzip) in parallel chunks of lines.
pub fn read_text(path: &Path) -> Result<(Vec<Packed>, ReadStats)> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let reader: Box<dyn Read> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut lines = BufReader::with_capacity(1 << 20, reader).lines();
    let mut out = Vec::new();
    let mut stats = ReadStats::default();
    loop {
        let chunk: Vec<String> = lines
            .by_ref()
            .take(1 << 16)
            .collect::<std::io::Result<_>>()
            .with_context(|| format!("reading {}", path.display()))?;
        if chunk.is_empty() {
            break;
        }
        let parsed: Vec<Result<Packed, Reject>> =
            chunk.par_iter().filter(|l| !l.trim().is_empty()).map(|l| parse_line(l)).collect();
        for r in parsed {
            match r {
                Ok(p) => out.push(p),
                Err(Reject::Syntax) => stats.bad_syntax += 1,
                Err(Reject::Position) => stats.bad_position += 1,
            }
        }
    }
    stats.kept = out.len();
    Ok((out, stats))
}

const CACHE_MAGIC: &[u8; 8] = b"NUEPOS01";

/// The cache file for `source` inside `dir`, named after the source and its size so that a
/// changed source gets a new cache.
pub fn cache_path(dir: &Path, source: &Path) -> Result<PathBuf> {
    let len = std::fs::metadata(source)
        .with_context(|| format!("cannot read {}", source.display()))?
        .len();
    let name = source.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    Ok(dir.join(format!("{name}.{len}.bin")))
}

/// Writes packed positions to a cache file.
pub fn write_cache(path: &Path, positions: &[Packed]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let mut w = BufWriter::new(
        File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?,
    );
    w.write_all(CACHE_MAGIC)?;
    w.write_all(&(positions.len() as u64).to_le_bytes())?;
    w.write_all(bytemuck::cast_slice(positions))?;
    w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

/// Reads a cache file written by [`write_cache`].
pub fn read_cache(path: &Path) -> Result<Vec<Packed>> {
    let mut f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut header = [0u8; 16];
    f.read_exact(&mut header)?;
    ensure!(&header[..8] == CACHE_MAGIC, "{} is not a nue position cache", path.display());
    let n = u64::from_le_bytes(header[8..].try_into().expect("8 bytes")) as usize;
    let mut out = vec![Packed::zeroed(); n];
    f.read_exact(bytemuck::cast_slice_mut(&mut out))
        .with_context(|| format!("{} is truncated", path.display()))?;
    Ok(out)
}

/// Loads every source, through its cache when there is one, printing a summary per file.
/// Returns one vector per source, each in file order (consecutive positions come from
/// the same game).
pub fn load_all(sources: &[PathBuf], cache_dir: &Path) -> Result<Vec<Vec<Packed>>> {
    if sources.is_empty() {
        bail!("no training data given");
    }
    std::fs::create_dir_all(cache_dir)
        .with_context(|| format!("cannot create {}", cache_dir.display()))?;
    let mut all = Vec::new();
    for source in sources {
        let cache = cache_path(cache_dir, source)?;
        let positions = if cache.exists() {
            let p = read_cache(&cache)?;
            eprintln!(
                "{}: {} positions (cached in {})",
                source.display(),
                p.len(),
                cache.display()
            );
            p
        } else {
            let start = std::time::Instant::now();
            let (p, stats) = read_text(source)?;
            eprintln!(
                "{}: {} positions, skipped {} malformed lines and {} illegal positions ({:.1} s); caching in {}",
                source.display(),
                stats.kept,
                stats.bad_syntax,
                stats.bad_position,
                start.elapsed().as_secs_f64(),
                cache.display()
            );
            write_cache(&cache, &p)?;
            p
        };
        all.push(positions);
    }
    ensure!(all.iter().any(|p| !p.is_empty()), "the training data holds no usable positions");
    Ok(all)
}

/// A batch in the form the trainer consumes: feature lists (side to move first), the
/// count of active features per perspective, and the labels.
#[derive(Default)]
pub struct Batch {
    /// `features[i]` holds position i's indices, `[us, them]`; only the first `counts[i]`
    /// of each are used.
    pub features: Vec<[[u16; MAX_ACTIVE]; 2]>,
    /// Active features per perspective.
    pub counts: Vec<u8>,
    /// Search scores, internal units, side to move's view.
    pub scores: Vec<f32>,
    /// Results, side to move's view.
    pub results: Vec<f32>,
}

impl Batch {
    /// Extracts the features of `positions`.
    pub fn new(positions: &[Packed]) -> Batch {
        Batch::build(positions, &vec![false; positions.len()])
    }

    /// Extracts the features of `positions`, mirroring each one with probability ½
    /// (the choices come from `rng`, so a seed reproduces them).
    pub fn augmented(positions: &[Packed], rng: &mut Rng) -> Batch {
        let mirror: Vec<bool> = positions.iter().map(|_| rng.next_u64() & 1 == 1).collect();
        Batch::build(positions, &mirror)
    }

    /// Extracts the features and puts the positions in the order of their king squares
    /// (the feature blocks of both perspectives), so that neighbours in the batch mostly
    /// read the same rows of the feature transformer and find them in the cache. The
    /// batch's gradient is a sum over its positions, so the order changes nothing else.
    fn build(positions: &[Packed], mirror: &[bool]) -> Batch {
        let extracted: Vec<_> =
            positions.par_iter().zip(mirror).map(|(p, &m)| p.features_mirrored(m)).collect();
        let block = |(f, n): &([[u16; MAX_ACTIVE]; 2], usize), side: usize| {
            if *n == 0 {
                0
            } else {
                usize::from(f[side][0]) / features::BLOCK
            }
        };
        let mut order: Vec<usize> = (0..positions.len()).collect();
        order.sort_by_key(|&i| (block(&extracted[i], 0), block(&extracted[i], 1)));
        Batch {
            features: order.iter().map(|&i| extracted[i].0).collect(),
            counts: order.iter().map(|&i| extracted[i].1 as u8).collect(),
            scores: order.iter().map(|&i| positions[i].score()).collect(),
            results: order.iter().map(|&i| positions[i].result()).collect(),
        }
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::EnPassantMode;

    #[test]
    fn packing_round_trips_and_labels_flip_with_the_side_to_move() {
        let line = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 2 3 | 57 | 1.0";
        let p = parse_line(line).unwrap();
        let pos: Chess = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 2 3"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        assert_eq!(&p.board(), pos.board());
        assert_eq!(p.turn(), Color::Black);
        assert_eq!(p.result(), 0.0);
        assert!((p.score() + 57.0 * 2.08).abs() < 1e-3);
        let (f, n) = p.features();
        assert_eq!(n, 30);
        let mut ours: Vec<usize> = f[0][..n].iter().map(|&i| usize::from(i)).collect();
        ours.sort_unstable();
        let mut expected = features::active(pos.board(), Color::Black).to_vec();
        expected.sort_unstable();
        assert_eq!(ours, expected);
        let _ = Fen::from_position(&pos, EnPassantMode::Legal);
    }

    #[test]
    fn mirrored_features_are_those_of_the_mirrored_board() {
        let line =
            "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQkq - 1 5 | 30 | 0.5";
        let p = parse_line(line).unwrap();
        let mut board = p.board();
        board.flip_horizontal();
        let (f, n) = p.features_mirrored(true);
        for (side, perspective) in [Color::White, Color::Black].into_iter().enumerate() {
            let mut ours: Vec<usize> = f[side][..n].iter().map(|&i| usize::from(i)).collect();
            ours.sort_unstable();
            let mut expected = features::active(&board, perspective).to_vec();
            expected.sort_unstable();
            assert_eq!(ours, expected);
        }
    }

    #[test]
    fn bad_lines_are_classified() {
        assert_eq!(parse_line("garbage"), Err(Reject::Syntax));
        assert_eq!(parse_line("8/8/8/8/8/8/8/8 w - - 0 1 | x | 1.0"), Err(Reject::Syntax));
        assert_eq!(parse_line("8/8/8/8/8/8/8/8 w - - 0 1 | 10 | 0.7"), Err(Reject::Syntax));
        assert_eq!(parse_line("8/8/8/8/8/8/8/8 w - - 0 1 | 10 | 1.0"), Err(Reject::Position));
        assert_eq!(parse_line("not a fen | 10 | 1.0"), Err(Reject::Position));
    }
}
