//! Training data: the two text layouts of docs/chain-format.md, a compact binary cache,
//! the filters that choose which positions to train on, and batches of HalfKP features.
//!
//! - Per-position files: lines `<fen> | <score> | <result>`, the score in centipawns and
//!   the result (1.0, 0.5, 0.0) both from White's point of view.
//! - Game chains ([`crate::chain`]): whole games, every ply with its score, positions in
//!   check, captures and mate scores included.
//!
//! A file's layout is read from its first non-empty line and gzip from its first bytes,
//! whatever its name (docs/chain-format.md, "How readers tell files apart").
//!
//! Parsing is the slow part, so each input file is converted once into a cache of
//! 32-byte [`Packed`] records next to the other training outputs, and later runs read
//! the cache. A chain's cache holds every ply with what the filters need to know (its
//! ply, whether it is in check, whether its move captures or promotes, whether its score
//! was a mate), so changing a filter never means parsing again.

use std::{
    fs::File,
    io::{BufWriter, Read, Write},
    path::{Path, PathBuf},
};

use anyhow::{bail, ensure, Context, Result};
use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;
use shakmaty::{
    fen::Fen, Bitboard, Board, CastlingMode, Chess, Color, Piece, Position, Role, Square,
};

use crate::{
    chain::{Game, Layout, Lines},
    nnue::{
        features::{self, MAX_ACTIVE},
        PAWN_VALUE,
    },
    rng::Rng,
};

/// One training position in 32 bytes: occupancy, a nibble per piece in square order, the
/// labels, and what the filters look at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Packed {
    occupied: u64,
    /// Piece codes (`color * 8 + role`), two per byte, in ascending square order.
    pieces: [u8; 16],
    /// Search score in centipawns, White's point of view (0 for a mate score).
    score_cp: i16,
    /// Game result for White: 0 loss, 1 draw, 2 win.
    result: u8,
    /// 0 when White is to move, 1 when Black is.
    turn: u8,
    /// Index of the position in its game chain; [`Packed::NO_PLY`] for per-position files.
    ply: u16,
    /// [`Packed::IN_CHECK`], [`Packed::NOISY`], [`Packed::MATE`].
    flags: u8,
    _reserved: u8,
}

const _: () = assert!(std::mem::size_of::<Packed>() == 32);

impl Packed {
    /// The side to move is in check.
    pub const IN_CHECK: u8 = 1;
    /// The move played from the position captures or promotes.
    pub const NOISY: u8 = 2;
    /// The search saw a forced mate (`#`): there is no score.
    pub const MATE: u8 = 4;
    /// The ply of a position whose game is unknown.
    pub const NO_PLY: u16 = u16::MAX;

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
            ply: Packed::NO_PLY,
            flags: 0,
            _reserved: 0,
        })
    }

    /// Every recorded position of a game chain, with its ply and flags; `None` when a
    /// position cannot be packed.
    pub fn from_game(game: &Game) -> Option<Vec<Packed>> {
        game.positions()
            .enumerate()
            .map(|(i, (pos, ply))| {
                let mut p =
                    Packed::new(pos.board(), pos.turn(), ply.score.unwrap_or(0), game.result)?;
                p.ply = i.min(usize::from(Packed::NO_PLY - 1)) as u16;
                let flag = |on: bool, flag: u8| if on { flag } else { 0 };
                p.flags = flag(pos.is_check(), Packed::IN_CHECK)
                    | flag(ply.mv.is_capture() || ply.mv.is_promotion(), Packed::NOISY)
                    | flag(ply.score.is_none(), Packed::MATE);
                Some(p)
            })
            .collect()
    }

    /// Whether all of `flags` are set.
    pub fn has(&self, flags: u8) -> bool {
        self.flags & flags == flags
    }

    /// Index of the position in its game chain, if it came from one.
    pub fn ply(&self) -> Option<u16> {
        (self.ply != Packed::NO_PLY).then_some(self.ply)
    }

    /// Search score in centipawns, White's point of view.
    pub fn score_cp(&self) -> i32 {
        i32::from(self.score_cp)
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
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ReadStats {
    /// Positions read.
    pub kept: usize,
    /// Position lines with a broken layout or numbers.
    pub bad_syntax: usize,
    /// Position lines whose FEN is not a legal position.
    pub bad_position: usize,
    /// Games read from a chain file.
    pub games: usize,
    /// Chain lines skipped whole: a broken layout, an illegal move, a bad score.
    pub bad_games: usize,
    /// Whether the file held game chains (read from its content, not its name).
    pub chain: bool,
    /// Why the file was not read to its end (a gzip stream cut short by a generator
    /// killed while writing, bytes that are not text), in words.
    pub problem: Option<&'static str>,
}

/// Reads a data file of either layout (plain or gzip) in parallel chunks of lines.
pub fn read_text(path: &Path) -> Result<(Vec<Packed>, ReadStats)> {
    let chain = Layout::of_file(path)? == Layout::Chain;
    let mut lines = Lines::open(path)?;
    let mut out = Vec::new();
    let mut stats = ReadStats { chain, ..ReadStats::default() };
    loop {
        let chunk: Vec<String> =
            lines.by_ref().take(if chain { 1 << 12 } else { 1 << 16 }).collect();
        if chunk.is_empty() {
            break;
        }
        let lines = chunk.par_iter().filter(|l| !l.trim().is_empty());
        if chain {
            let games: Vec<Option<Vec<Packed>>> =
                lines.map(|l| Game::parse(l).ok().and_then(|g| Packed::from_game(&g))).collect();
            for game in games {
                match game {
                    Some(positions) => {
                        stats.games += 1;
                        out.extend(positions);
                    }
                    None => stats.bad_games += 1,
                }
            }
        } else {
            let parsed: Vec<Result<Packed, Reject>> = lines.map(|l| parse_line(l)).collect();
            for r in parsed {
                match r {
                    Ok(p) => out.push(p),
                    Err(Reject::Syntax) => stats.bad_syntax += 1,
                    Err(Reject::Position) => stats.bad_position += 1,
                }
            }
        }
    }
    stats.kept = out.len();
    stats.problem = lines.problem();
    Ok((out, stats))
}

/// Which positions to train on. Per-position files were filtered when they were made
/// (no checks, no captures or promotions, no mates); game chains hold every ply, and
/// these choose (and, with `--pair-average` or `--average-plies`, how chain positions
/// are labelled).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::Args)]
pub struct Filter {
    /// Train on game-chain positions in which the side to move is in check.
    #[arg(long)]
    pub keep_in_check: bool,
    /// Train on game-chain positions whose recorded move captures or promotes.
    #[arg(long)]
    pub keep_noisy: bool,
    /// Train on positions scored as a forced mate (`#`), labelled ±--max-score toward
    /// the game's winner (those of drawn games are skipped all the same).
    #[arg(long)]
    pub keep_mates: bool,
    /// Skip the first plies of each game chain (the positions right after its random
    /// opening).
    #[arg(long, default_value_t = 8)]
    pub min_ply: u16,
    /// Skip positions whose score lies beyond this many centipawns.
    #[arg(long = "max-score", default_value_t = 3000)]
    pub max_score_cp: i32,
    /// Label each game-chain position with the mean of its score and the next ply's
    /// before filtering: `--average-plies 2`.
    #[arg(long)]
    pub pair_average: bool,
    /// Label each game-chain position with the mean of the scores of the N plies from it,
    /// N even so that either side's searches count alike, before filtering. A shallow
    /// search favours the side to move; the next ply's favours the other side, so the mean
    /// cancels most of that. Near a game's end or a mate the window shrinks.
    #[arg(long, value_name = "N", value_parser = parse_window, conflicts_with = "pair_average")]
    pub average_plies: Option<u16>,
}

/// The longest window `--average-plies` takes: a window spans part of one game.
const MAX_WINDOW: u16 = 64;

fn parse_window(text: &str) -> std::result::Result<u16, String> {
    let n: u16 = text.parse().map_err(|_| format!("`{text}` is not a number of plies"))?;
    if n < 2 || !n.is_multiple_of(2) || n > MAX_WINDOW {
        return Err(format!("the window must be an even number of plies from 2 to {MAX_WINDOW}"));
    }
    Ok(n)
}

impl Default for Filter {
    fn default() -> Self {
        Filter {
            keep_in_check: false,
            keep_noisy: false,
            keep_mates: false,
            min_ply: 8,
            max_score_cp: 3000,
            pair_average: false,
            average_plies: None,
        }
    }
}

/// How many positions each filter removed (a position counts under the first that
/// removes it, in the order of the fields).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FilterStats {
    /// Positions kept.
    pub kept: usize,
    /// Side to move in check.
    pub in_check: usize,
    /// Move captures or promotes.
    pub noisy: usize,
    /// Mate scores.
    pub mate: usize,
    /// Among the first plies of a chain.
    pub early: usize,
    /// Score beyond the cap.
    pub beyond_cap: usize,
}

impl Filter {
    /// The plies whose scores make a chain position's label: 1 (its own) unless
    /// `pair_average` or `average_plies` says otherwise.
    pub fn window(&self) -> usize {
        match (self.average_plies, self.pair_average) {
            (Some(n), _) => n.into(),
            (None, true) => 2,
            (None, false) => 1,
        }
    }

    /// Removes the positions this filter skips, relabelling kept mates (and averaging
    /// scores over plies first, see [`Filter::window`]); keeps the order.
    pub fn apply(&self, positions: &mut Vec<Packed>) -> FilterStats {
        let window = self.window();
        if window > 1 {
            average_plies(positions, window);
        }
        let mut stats = FilterStats::default();
        let cap = self.max_score_cp.clamp(0, i32::from(i16::MAX));
        positions.retain_mut(|p| {
            let reason = if !self.keep_in_check && p.has(Packed::IN_CHECK) {
                &mut stats.in_check
            } else if !self.keep_noisy && p.has(Packed::NOISY) {
                &mut stats.noisy
            } else if p.has(Packed::MATE) && (!self.keep_mates || p.result == 1) {
                &mut stats.mate
            } else if p.ply().is_some_and(|ply| ply < self.min_ply) {
                &mut stats.early
            } else if !p.has(Packed::MATE) && p.score_cp().abs() > cap {
                &mut stats.beyond_cap
            } else {
                if p.has(Packed::MATE) {
                    p.score_cp = if p.result == 2 { cap } else { -cap } as i16;
                }
                stats.kept += 1;
                return true;
            };
            *reason += 1;
            false
        });
        positions.shrink_to_fit();
        stats
    }
}

/// Labels each game-chain position with the mean of its score and the scores of the
/// plies after it, `window` plies in all (White's view; `window` even). A shallow search
/// is optimistic for the side to move: on consecutive quiet plies Stockfish 15.1's
/// depth-4 scores favour it by about 26 cp, its depth-7 scores by about 5
/// (`nets/log.md`). The next ply's search is as optimistic for the other side, so a
/// mean over as many plies of either side to move cancels most of it, and it averages
/// several searches. Near a game's end or a mate score the window shrinks to the even
/// number of plies left before it; a position with fewer than two, and the positions of
/// per-position files (which have no ply), keep their own score.
pub fn average_plies(positions: &mut [Packed], window: usize) {
    debug_assert!(window >= 2 && window.is_multiple_of(2));
    // Position i's window reads i and the plies after it, which are not relabelled yet.
    for i in 0..positions.len() {
        let mut span = 0;
        while span < window && i + span < positions.len() {
            let p = positions[i + span];
            let follows = span == 0
                || matches!((positions[i + span - 1].ply(), p.ply()), (Some(a), Some(b)) if b == a + 1);
            if !follows || p.has(Packed::MATE) {
                break;
            }
            span += 1;
        }
        let even = span - span % 2;
        if even >= 2 {
            // The mean of i16 values lies within i16; truncation toward zero keeps the
            // rounding the same for either colour.
            let sum: i32 = positions[i..i + even].iter().map(|p| i32::from(p.score_cp)).sum();
            positions[i].score_cp = (sum / even as i32) as i16;
        }
    }
}

const CACHE_MAGIC: &[u8; 8] = b"NUEPOS02";

/// The cache file for `source` inside `dir`, named after the source, its size and the
/// cache's version, so that a changed source gets a new cache.
pub fn cache_path(dir: &Path, source: &Path) -> Result<PathBuf> {
    let len = std::fs::metadata(source)
        .with_context(|| format!("cannot read {}", source.display()))?
        .len();
    let name = source.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    Ok(dir.join(format!("{name}.{len}.v2.bin")))
}

/// Writes packed positions to a cache file, creating its folder when needed.
pub fn write_cache(path: &Path, positions: &[Packed]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
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

/// The data files named by `paths`: a file stands for itself, a folder for the
/// `*.txt.gz` and `*.txt` files in it (both layouts), in name order.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .with_context(|| format!("cannot list {}", path.display()))?
                .filter_map(|e| Some(e.ok()?.path()))
                .filter(|p| {
                    let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
                    p.is_file()
                        && name.is_some_and(|n| n.ends_with(".txt.gz") || n.ends_with(".txt"))
                })
                .collect();
            found.sort();
            ensure!(!found.is_empty(), "{} holds no .txt or .txt.gz data files", path.display());
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// Loads every source (files or folders, see [`expand`]), through its cache when there is
/// one, applies `filter`, and prints a summary per file. Returns one vector per file,
/// each in file order (consecutive positions come from the same game).
pub fn load_all(
    sources: &[PathBuf],
    cache_dir: &Path,
    filter: &Filter,
) -> Result<Vec<Vec<Packed>>> {
    let files = expand(sources)?;
    if files.is_empty() {
        bail!("no training data given");
    }
    let mut all = Vec::new();
    for source in &files {
        let cache = cache_path(cache_dir, source)?;
        let mut positions = if cache.exists() {
            read_cache(&cache)?
        } else {
            let start = std::time::Instant::now();
            let (p, stats) = read_text(source)?;
            let skipped = if stats.chain {
                format!("{} games, {} malformed games skipped", stats.games, stats.bad_games)
            } else {
                format!(
                    "{} malformed lines and {} illegal positions skipped",
                    stats.bad_syntax, stats.bad_position
                )
            };
            eprintln!(
                "{}: read {} positions; {skipped}{} ({:.1} s)",
                source.display(),
                stats.kept,
                stats.problem.map(|p| format!("; {p}")).unwrap_or_default(),
                start.elapsed().as_secs_f64(),
            );
            write_cache(&cache, &p)?;
            p
        };
        let read = positions.len();
        let s = filter.apply(&mut positions);
        eprintln!(
            "{}: {} of {read} positions kept (skipped: {} in check, {} captures or promotions, \
             {} mate scores, {} early plies, {} beyond the score cap)",
            source.display(),
            s.kept,
            s.in_check,
            s.noisy,
            s.mate,
            s.early,
            s.beyond_cap
        );
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

    /// A hand-written game: two quiet plies, a promotion with check, the evasion, a
    /// capture, a score beyond the cap, and a mate score.
    const CHAIN: &str = "4k3/P7/8/8/8/8/p7/R3K3 w - - 0 1 | 1.0 | \
        e1f1 30 e8d8 -20 a7a8q 900 d8e7 950 a1a2 1000 e7e6 4000 a8a6 #";

    fn chain_positions() -> Vec<Packed> {
        Packed::from_game(&Game::parse(CHAIN).unwrap()).unwrap()
    }

    #[test]
    fn chain_positions_carry_their_ply_and_flags() {
        let p = chain_positions();
        assert_eq!(p.len(), 7);
        assert_eq!(
            p.iter().map(|p| p.ply().unwrap()).collect::<Vec<_>>(),
            (0..7).collect::<Vec<_>>()
        );
        let flags: Vec<u8> = p.iter().map(|p| p.flags).collect();
        assert_eq!(flags, [0, 0, Packed::NOISY, Packed::IN_CHECK, Packed::NOISY, 0, Packed::MATE]);
        assert_eq!(p[3].turn(), Color::Black);
        assert_eq!(p[3].score_cp(), 950);
        assert_eq!(p[3].result(), 0.0);
    }

    #[test]
    fn each_filter_removes_what_it_names() {
        let run = |filter: Filter| {
            let mut p = chain_positions();
            let stats = filter.apply(&mut p);
            (p.iter().map(|p| p.ply().unwrap()).collect::<Vec<_>>(), stats)
        };
        let all = Filter { min_ply: 0, ..Filter::default() };
        let (kept, stats) = run(all);
        assert_eq!(kept, [0, 1]);
        let expected =
            FilterStats { kept: 2, in_check: 1, noisy: 2, mate: 1, early: 0, beyond_cap: 1 };
        assert_eq!(stats, expected);

        assert_eq!(run(Filter { keep_in_check: true, ..all }).0, [0, 1, 3]);
        assert_eq!(run(Filter { keep_noisy: true, ..all }).0, [0, 1, 2, 4]);
        assert_eq!(run(Filter { max_score_cp: 5000, ..all }).0, [0, 1, 5]);
        assert_eq!(
            run(Filter { min_ply: 1, ..all }),
            (vec![1], FilterStats { kept: 1, early: 1, ..stats })
        );
        assert_eq!(run(Filter::default()).1.early, 3);

        // A kept mate is labelled as a capped score for the winner.
        let mut p = chain_positions();
        Filter { keep_mates: true, ..all }.apply(&mut p);
        assert_eq!(p.iter().map(|p| p.ply().unwrap()).collect::<Vec<_>>(), [0, 1, 6]);
        assert_eq!(p[2].score_cp(), 3000);

        // Per-position lines have no ply and no flags: only the score cap applies.
        let mut lines = vec![
            parse_line("4k3/8/8/8/8/8/8/R3K3 w - - 0 1 | 2500 | 1.0").unwrap(),
            parse_line("4k3/8/8/8/8/8/8/R3K3 w - - 0 1 | 3500 | 1.0").unwrap(),
        ];
        assert_eq!(Filter::default().apply(&mut lines).kept, 1);
    }

    #[test]
    fn pair_averaging_labels_a_position_with_the_mean_of_two_consecutive_scores() {
        let short = "4k3/8/8/8/8/8/8/R3K3 w - - 0 1 | 1.0 | a1a7 500 e8d8 -601";
        let mut p = Packed::from_game(&Game::parse(short).unwrap()).unwrap();
        p.extend(chain_positions());
        p.push(parse_line("4k3/8/8/8/8/8/8/R3K3 w - - 0 1 | 70 | 1.0").unwrap());
        p.push(parse_line("4k3/8/8/8/8/8/8/R3K3 b - - 0 1 | -30 | 1.0").unwrap());
        average_plies(&mut p, 2);
        let scores: Vec<i32> = p.iter().map(|p| p.score_cp()).collect();
        // Rounded toward zero (-101 / 2); a game's last position and the position before
        // a mate keep their own score, and so do per-position lines.
        assert_eq!(scores, [-50, -601, 5, 440, 925, 975, 2500, 4000, 0, 70, -30]);

        // `--pair-average` relabels before the filters drop the neighbours.
        let mut p = chain_positions();
        let all =
            Filter { min_ply: 0, max_score_cp: 5000, pair_average: true, ..Filter::default() };
        all.apply(&mut p);
        assert_eq!(p.iter().map(|p| p.score_cp()).collect::<Vec<_>>(), [5, 440, 4000]);
    }

    #[test]
    fn longer_windows_shrink_to_an_even_number_of_plies_before_a_mate() {
        // White's view: 30, -20, 900, 950, 1000, 4000, then a mate score.
        let mut p = chain_positions();
        average_plies(&mut p, 4);
        let scores: Vec<i32> = p.iter().map(|p| p.score_cp()).collect();
        // 1860 / 4, 2830 / 4 and 6850 / 4 truncated; then three plies before the mate
        // (two are used), two, one (its own score) and the mate itself.
        assert_eq!(&scores[..6], [465, 707, 1712, 975, 2500, 4000]);
        assert!(p[6].has(Packed::MATE));

        // The flag, and `--pair-average` as its window of two.
        let filter = |args: &[&str]| {
            #[derive(clap::Parser)]
            struct Cli {
                #[command(flatten)]
                filter: Filter,
            }
            let args = std::iter::once("nue").chain(args.iter().copied());
            <Cli as clap::Parser>::try_parse_from(args).map(|cli| cli.filter.window())
        };
        assert_eq!(filter(&[]).unwrap(), 1);
        assert_eq!(filter(&["--pair-average"]).unwrap(), 2);
        assert_eq!(filter(&["--average-plies", "6"]).unwrap(), 6);
        for bad in ["3", "0", "66", "two"] {
            assert!(filter(&["--average-plies", bad]).is_err(), "{bad}");
        }
        assert!(filter(&["--pair-average", "--average-plies", "4"]).is_err());
    }

    #[test]
    fn malformed_games_are_skipped_whole_and_counted() {
        let dir = std::env::temp_dir().join(format!("nue-data-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.chain.txt");
        let illegal = CHAIN.replace("a1a2", "a1a3");
        std::fs::write(&path, format!("{CHAIN}\n{illegal}\nnot a game\n\n{CHAIN}\n")).unwrap();
        let (positions, stats) = read_text(&path).unwrap();
        assert_eq!(positions.len(), 14);
        assert_eq!((stats.games, stats.bad_games, stats.problem), (2, 2, None));
        std::fs::remove_dir_all(&dir).unwrap();
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
