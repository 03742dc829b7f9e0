//! `nue datagen`: self-play games for training, written as game chains
//! ([`crate::chain`]).
//!
//! A game starts from a few random legal plies (or a random book position, optionally
//! followed by random plies); an opening whose first search scores beyond
//! `--opening-bound` is thrown away. Then the player chooses every move by a search,
//! and the move and the search's score are recorded, until the game ends by rule
//! (mate, stalemate, repetition, fifty moves, insufficient material), by a mate score,
//! or by adjudication: a win once the score stays beyond `--win-bound` for `--win-plies`
//! plies, a draw once, late in the game, it stays within `--draw-bound` for
//! `--draw-plies` plies.
//!
//! The player is Nue's own search (a soft node limit or a depth per move) or any UCI
//! engine (`--engine`), which both plays and labels. Every worker thread has its own
//! player; one writer appends finished games to the file, one gzip member each, so a
//! killed run loses only its games in progress. Game `i` draws its randomness from the
//! seed and `i` alone, so a one-thread run reproduces exactly, and a run appending to a
//! file continues the numbering where the file ends.
//!
//! With `--tree-out`, a run also writes positions from inside the searches' trees, the
//! kind of data that nodchip's Stockfish trainer found worth +26 ± 18 Elo at 100 M
//! positions (`../shared/docs/training-notes.md`): for each searched move (or a
//! `--tree-rate` share of them) a position two or more plies down its principal variation,
//! searched again by the same player at the same depth or nodes and kept when it is quiet
//! (not in check, its best move neither a capture nor a promotion, no mate score). They
//! go to their own file, one `<fen> | <score> | <result>` line each (the layout `nue
//! train` reads besides chains), with the game's result, written when the game is.
//!
//! The binary stops a run on SIGINT or SIGTERM ([`stop_on_signal`]) as `--seconds` does:
//! no new game starts, the games in progress are dropped, and the summary is printed; a
//! second signal ends the process at once. A UCI player runs in its own process group,
//! so Ctrl-C in a terminal reaches only `nue`, which then closes the engine itself.

use std::{
    collections::HashMap,
    io::{BufRead, BufReader, BufWriter, Write},
    os::unix::process::CommandExt,
    path::PathBuf,
    process::{Child, ChildStdin, ChildStdout, Command, Stdio},
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering::Relaxed},
        mpsc,
    },
    time::{Duration, Instant},
};

use anyhow::{bail, ensure, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use shakmaty::{fen::Fen, CastlingMode, Chess, Color, EnPassantMode, Move, Position};

use crate::{
    api::{Control, Report},
    board::key_of,
    book,
    chain::{count_games, ChainWriter, Game, Ply},
    engine::{parse_move, Engine, SEARCH_STACK_BYTES},
    nnue::internal_to_cp,
    rng::Rng,
    search::time::Limits,
    types::{is_mate, Bound},
};

/// Options of `nue datagen`.
#[derive(Clone, Debug, clap::Args)]
pub struct DatagenArgs {
    /// The chain file to append games to (`.chain.txt.gz`).
    #[arg(long)]
    pub out: PathBuf,
    /// Games to add (default: no limit; stop with `--seconds`, Ctrl-C or SIGTERM).
    #[arg(long)]
    pub games: Option<u64>,
    /// Start no game after this many seconds, and drop the games still in progress.
    #[arg(long)]
    pub seconds: Option<u64>,
    /// Worker threads, each with its own player.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Seed of the openings; game i of a seed is always the same opening.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Soft node limit per move: no new iteration once it is passed (Nue's search; with
    /// `--engine`, sent as `go nodes`). Default 5000 when neither this nor `--depth` is given.
    #[arg(long, conflicts_with = "depth")]
    pub nodes: Option<u64>,
    /// Search depth per move, instead of a node limit.
    #[arg(long)]
    pub depth: Option<u32>,
    /// A UCI engine that plays and labels the games instead of Nue's own search.
    #[arg(long)]
    pub engine: Option<PathBuf>,
    /// An option for `--engine`, `NAME=VALUE` (repeatable); Threads=1 and Hash=16 are
    /// sent first.
    #[arg(long = "engine-option", value_name = "NAME=VALUE")]
    pub engine_options: Vec<String>,
    /// Hash table of Nue's search, MiB per worker.
    #[arg(long, default_value_t = 16)]
    pub hash: usize,
    /// An EPD or PGN book: each game starts from one of its positions, chosen at random.
    #[arg(long)]
    pub book: Option<PathBuf>,
    /// Random legal plies at the start of a game (after the book position, if any);
    /// every other game plays one more, so both sides get to move first. Default 8
    /// without a book, 0 with one.
    #[arg(long)]
    pub random_plies: Option<usize>,
    /// Discard an opening whose first search scores beyond this, centipawns.
    #[arg(long, default_value_t = 400)]
    pub opening_bound: i32,
    /// Adjudicate a win once |score| stays at least this (centipawns, one side)...
    #[arg(long, default_value_t = 1000)]
    pub win_bound: i32,
    /// ...for this many consecutive plies.
    #[arg(long, default_value_t = 6)]
    pub win_plies: usize,
    /// Adjudicate a draw from this game ply on (counted from the start position)...
    #[arg(long, default_value_t = 80)]
    pub draw_after: usize,
    /// ...once |score| stays at most this (centipawns)...
    #[arg(long, default_value_t = 10)]
    pub draw_bound: i32,
    /// ...for this many consecutive plies.
    #[arg(long, default_value_t = 10)]
    pub draw_plies: usize,
    /// A game still going after this many recorded plies is a draw.
    #[arg(long, default_value_t = 600)]
    pub max_plies: usize,
    /// Also write positions from inside the searches' trees to this file (`.txt.gz`, one
    /// `<fen> | <score> | <result>` line each): two or more plies down the principal
    /// variation of a searched move, searched again and kept when quiet.
    #[arg(long)]
    pub tree_out: Option<PathBuf>,
    /// The share of searched moves whose principal variation gives a tree position.
    #[arg(long, default_value_t = 1.0, requires = "tree_out")]
    pub tree_rate: f64,
}

/// Default soft node limit per move.
pub const DEFAULT_NODES: u64 = 5000;
/// Hard node limit as a multiple of the soft one: an iteration that would run far past
/// the soft limit is cut, and its move not used.
const HARD_NODES_FACTOR: u64 = 8;
/// Openings tried for one game before giving up on the settings.
const MAX_OPENING_TRIES: usize = 1000;

/// A search's score, from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawns.
    Cp(i32),
    /// A forced mate: positive when the side to move mates.
    Mate(i32),
}

/// A move chosen by a search, with its score.
#[derive(Clone, Debug)]
pub struct Choice {
    /// The move to play.
    pub mv: Move,
    /// The score of the position it is played from.
    pub score: Score,
    /// The search's principal variation: `mv` and the moves expected after it (only `mv`
    /// when the search gave no longer line).
    pub pv: Vec<Move>,
}

/// Something that chooses moves: Nue's search or a UCI engine.
pub trait Player {
    /// Forgets the last game.
    fn new_game(&mut self) -> Result<()>;
    /// Chooses a move in `pos`, reached from `start` by `moves`.
    fn choose(&mut self, start: &Chess, moves: &[Move], pos: &Chess) -> Result<Choice>;
}

/// Nue's own search.
pub struct NuePlayer {
    engine: Engine,
    limits: Limits,
}

impl NuePlayer {
    /// A player searching to `depth`, or else to a soft limit of `nodes`.
    pub fn new(hash_mb: usize, nodes: u64, depth: Option<u32>) -> Result<NuePlayer> {
        let limits = match depth {
            Some(d) => Limits { depth: Some(d), ..Limits::default() },
            None => Limits {
                soft_nodes: Some(nodes),
                nodes: Some(nodes.saturating_mul(HARD_NODES_FACTOR)),
                ..Limits::default()
            },
        };
        Ok(NuePlayer { engine: Engine::new(hash_mb)?, limits })
    }
}

impl Player for NuePlayer {
    fn new_game(&mut self) -> Result<()> {
        self.engine.new_game();
        Ok(())
    }

    fn choose(&mut self, start: &Chess, moves: &[Move], _pos: &Chess) -> Result<Choice> {
        self.engine.set_position(start.clone(), moves);
        let mut pv = Vec::new();
        let mut report = |r: &Report| {
            if r.multipv == 1 && r.bound == Bound::Exact {
                pv.clone_from(&r.pv);
            }
        };
        let outcome = self.engine.go(&self.limits, &Control::default(), &mut report);
        let mv = outcome.best.context("the search found no move")?;
        let score = if is_mate(outcome.score) {
            Score::Mate(outcome.score.signum())
        } else {
            Score::Cp(internal_to_cp(outcome.score))
        };
        // An iteration cut by the node limit may have changed its mind after its last line.
        if pv.first() != Some(&mv) {
            pv = vec![mv];
        }
        Ok(Choice { mv, score, pv })
    }
}

/// A UCI engine in a child process.
pub struct UciPlayer {
    child: Child,
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
    go: String,
    name: String,
}

impl UciPlayer {
    /// Starts `path`, sets `options` (`NAME=VALUE`) and waits until it is ready.
    pub fn start(path: &std::path::Path, options: &[String], go: String) -> Result<UciPlayer> {
        let mut child = Command::new(path)
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot start {}", path.display()))?;
        let input = BufWriter::new(child.stdin.take().expect("piped stdin"));
        let output = BufReader::new(child.stdout.take().expect("piped stdout"));
        let name = path.display().to_string();
        let mut player = UciPlayer { child, input, output, go, name };
        player.send("uci")?;
        player.wait_for("uciok")?;
        for option in
            ["Threads=1", "Hash=16"].iter().copied().chain(options.iter().map(|s| s.as_str()))
        {
            let (name, value) = option
                .split_once('=')
                .with_context(|| format!("engine option '{option}' is not NAME=VALUE"))?;
            player.send(&format!("setoption name {} value {}", name.trim(), value.trim()))?;
        }
        player.send("isready")?;
        player.wait_for("readyok")?;
        Ok(player)
    }

    fn send(&mut self, line: &str) -> Result<()> {
        writeln!(self.input, "{line}")
            .and_then(|()| self.input.flush())
            .with_context(|| format!("{} stopped reading its input", self.name))
    }

    /// Reads lines until one starts with `word`, and returns it.
    fn wait_for(&mut self, word: &str) -> Result<String> {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self
                .output
                .read_line(&mut line)
                .with_context(|| format!("reading from {}", self.name))?;
            ensure!(n > 0, "{} exited while Nue waited for '{word}'", self.name);
            if line.split_ascii_whitespace().next() == Some(word) {
                return Ok(line);
            }
        }
    }
}

impl Drop for UciPlayer {
    /// Asks the engine to quit, and kills it when it has not within a second.
    fn drop(&mut self) {
        let _ = self.send("quit");
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Player for UciPlayer {
    fn new_game(&mut self) -> Result<()> {
        self.send("ucinewgame")?;
        self.send("isready")?;
        self.wait_for("readyok").map(|_| ())
    }

    fn choose(&mut self, start: &Chess, moves: &[Move], pos: &Chess) -> Result<Choice> {
        let (base, recent) = since_last_irreversible(start, moves, pos);
        let mut command =
            format!("position fen {}", Fen::from_position(&base, EnPassantMode::Legal));
        if !recent.is_empty() {
            command.push_str(" moves");
            for m in recent {
                command.push(' ');
                command.push_str(&m.to_uci(CastlingMode::Standard).to_string());
            }
        }
        self.send(&command)?;
        let go = self.go.clone();
        self.send(&go)?;
        let mut score = None;
        let mut pv_text = String::new();
        let mut line = String::new();
        loop {
            line.clear();
            let n = self
                .output
                .read_line(&mut line)
                .with_context(|| format!("reading from {}", self.name))?;
            ensure!(n > 0, "{} exited during a search", self.name);
            let mut words = line.split_ascii_whitespace();
            match words.next() {
                Some("info") => {
                    if let Some(s) = parse_info_score(&line) {
                        score = Some(s);
                        pv_text = info_pv(&line).to_string();
                    }
                }
                Some("bestmove") => {
                    let text = words.next().unwrap_or("(none)");
                    let mv = parse_move(pos, text).with_context(|| {
                        format!(
                            "{} answered the illegal move '{text}' in {}",
                            self.name,
                            Fen::from_position(pos, EnPassantMode::Legal)
                        )
                    })?;
                    let score = score.with_context(|| format!("{} gave no score", self.name))?;
                    let mut pv = parse_pv(pos, &pv_text);
                    if pv.first() != Some(&mv) {
                        pv = vec![mv];
                    }
                    return Ok(Choice { mv, score, pv });
                }
                _ => {}
            }
        }
    }
}

/// The game as the engine needs to see it: the position after the last capture or pawn
/// move, and the moves since. No position before that move can come again, and the FEN
/// carries the fifty-move count, so the engine searches exactly as it would from the whole
/// game; sending the whole game instead costs it a parse of every move at every ply, which
/// grows with the game.
fn since_last_irreversible<'a>(
    start: &Chess,
    moves: &'a [Move],
    pos: &Chess,
) -> (Chess, &'a [Move]) {
    let cut = moves.len().saturating_sub(pos.halfmoves() as usize);
    let mut base = start.clone();
    for m in &moves[..cut] {
        base.play_unchecked(*m);
    }
    (base, &moves[cut..])
}

/// The score of an `info` line, unless it is only a bound of an aspiration search.
fn parse_info_score(line: &str) -> Option<Score> {
    let words: Vec<&str> = line.split_ascii_whitespace().collect();
    if words.iter().any(|w| *w == "lowerbound" || *w == "upperbound") {
        return None;
    }
    if words.windows(2).any(|w| w[0] == "multipv" && w[1] != "1") {
        return None;
    }
    let i = words.iter().position(|w| *w == "score")?;
    let value: i32 = words.get(i + 2)?.parse().ok()?;
    match *words.get(i + 1)? {
        "cp" => Some(Score::Cp(value)),
        "mate" => Some(Score::Mate(if value > 0 { 1 } else { -1 })),
        _ => None,
    }
}

/// The moves after `pv` in an `info` line, as text (empty without them).
fn info_pv(line: &str) -> &str {
    match line.split_once(" pv ") {
        Some((_, moves)) => moves.trim(),
        None => "",
    }
}

/// The legal moves of `text` (UCI moves played in turn from `pos`), up to the first that
/// is not one.
fn parse_pv(pos: &Chess, text: &str) -> Vec<Move> {
    let mut pos = pos.clone();
    let mut pv = Vec::new();
    for word in text.split_ascii_whitespace() {
        let Some(m) = parse_move(&pos, word) else { break };
        pos.play_unchecked(m);
        pv.push(m);
    }
    pv
}

/// Thresholds that end a game early.
#[derive(Clone, Copy, Debug)]
pub struct Rules {
    /// First searched score beyond which an opening is discarded, centipawns.
    pub opening_bound: i32,
    /// Win adjudication: |score| at least this...
    pub win_bound: i32,
    /// ...for this many plies in a row, all for the same side.
    pub win_plies: usize,
    /// Draw adjudication from this game ply on...
    pub draw_after: usize,
    /// ...when |score| is at most this...
    pub draw_bound: i32,
    /// ...for this many plies in a row.
    pub draw_plies: usize,
    /// Recorded plies after which a game is a draw.
    pub max_plies: usize,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            opening_bound: 400,
            win_bound: 1000,
            win_plies: 6,
            draw_after: 80,
            draw_bound: 10,
            draw_plies: 10,
            max_plies: 600,
        }
    }
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ending {
    /// Checkmate on the board.
    Checkmate,
    /// Stalemate.
    Stalemate,
    /// The same position a third time.
    Repetition,
    /// A hundred plies without a capture or a pawn move.
    FiftyMoves,
    /// Neither side can mate.
    InsufficientMaterial,
    /// The search announced a forced mate.
    MateScore,
    /// The score stayed decisive.
    WinAdjudicated,
    /// The score stayed near zero late in the game.
    DrawAdjudicated,
    /// The game reached the ply limit.
    MaxPlies,
}

/// Where a game starts.
pub enum Openings {
    /// The start position.
    Start,
    /// The positions of a book.
    Book(Vec<Chess>),
}

impl Openings {
    /// A start position for a game: a book position (or the initial one) and then
    /// `random_plies` random legal moves; `None` when the moves run into the end of a game.
    pub fn draw(&self, rng: &mut Rng, random_plies: usize) -> Option<Chess> {
        let mut pos = match self {
            Openings::Start => Chess::default(),
            Openings::Book(positions) => positions[rng.below(positions.len())].clone(),
        };
        for _ in 0..random_plies {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                return None;
            }
            pos.play_unchecked(moves[rng.below(moves.len())]);
        }
        (!pos.legal_moves().is_empty()).then_some(pos)
    }
}

/// A finished game and how it ended.
pub struct Played {
    /// The game.
    pub game: Game,
    /// Why it ended.
    pub ending: Ending,
    /// Openings thrown away before this one.
    pub discarded: usize,
    /// Positions from inside the game's searches (`--tree-out`), in the order found.
    pub tree: Vec<TreePosition>,
}

/// A position from inside a search's tree, labelled by a search of its own.
#[derive(Clone, Debug)]
pub struct TreePosition {
    /// The position.
    pub pos: Chess,
    /// Its searched score, centipawns from White's point of view.
    pub score: i32,
}

impl TreePosition {
    /// The position as a data line, `<fen> | <score> | <result>`, with `result` the game's
    /// from White's point of view.
    pub fn to_line(&self, result: f32) -> String {
        let fen = Fen::from_position(&self.pos, EnPassantMode::Legal);
        format!("{fen} | {} | {result:.1}", self.score)
    }
}

/// A position from inside the tree of the search that chose `pv[0]` in `pos` (reached
/// from `start` by `moves`): two to `pv.len()` plies down `pv`, at random, searched by
/// `player` and kept when it is quiet — not in check, its best move neither a capture
/// nor a promotion, no mate score — and neither the game's end nor a position the
/// trainer skips. One ply down would be the game's next position.
fn tree_position(
    player: &mut dyn Player,
    start: &Chess,
    moves: &[Move],
    pos: &Chess,
    pv: &[Move],
    rng: &mut Rng,
) -> Result<Option<TreePosition>> {
    if pv.len() < 2 {
        return Ok(None);
    }
    let plies = 2 + rng.below(pv.len() - 1);
    let mut line = moves.to_vec();
    let mut p = pos.clone();
    for &m in &pv[..plies] {
        if !p.is_legal(m) {
            return Ok(None);
        }
        p.play_unchecked(m);
        line.push(m);
    }
    if p.is_check() || p.is_insufficient_material() || p.halfmoves() >= 100 {
        return Ok(None);
    }
    if p.legal_moves().is_empty() {
        return Ok(None);
    }
    let label = player.choose(start, &line, &p)?;
    Ok(match label.score {
        Score::Cp(cp) if !label.mv.is_capture() && !label.mv.is_promotion() => {
            let score = if p.turn() == Color::White { cp } else { -cp };
            Some(TreePosition { pos: p, score })
        }
        _ => None,
    })
}

/// The game ply of a position, counted from the initial position.
fn game_ply(pos: &Chess) -> usize {
    (pos.fullmoves().get() as usize - 1) * 2 + usize::from(pos.turn() == Color::Black)
}

/// Plays game number `index`. Returns `None` when `abandon` says to stop first. With a
/// `tree_rate` above 0, that share of the searched moves also gives a position from
/// inside its search's tree ([`tree_position`]); the searches that label them share the
/// player's hash table with the game's, so the game differs from one played without.
#[allow(clippy::too_many_arguments)]
pub fn play_game(
    player: &mut dyn Player,
    openings: &Openings,
    random_plies: usize,
    rules: &Rules,
    seed: u64,
    index: u64,
    tree_rate: f64,
    abandon: &dyn Fn() -> bool,
) -> Result<Option<Played>> {
    let mut rng = Rng::new(Rng::new(seed).next_u64() ^ index);
    let mut discarded = 0;
    // The opening: its first search both filters it and gives the game's first move.
    let (start, first) = loop {
        ensure!(
            discarded < MAX_OPENING_TRIES,
            "{MAX_OPENING_TRIES} openings in a row were discarded: is --opening-bound too small?"
        );
        let plies = if random_plies > 0 { random_plies + rng.below(2) } else { 0 };
        let Some(start) = openings.draw(&mut rng, plies) else {
            discarded += 1;
            continue;
        };
        if abandon() {
            return Ok(None);
        }
        player.new_game()?;
        let choice = player.choose(&start, &[], &start)?;
        match choice.score {
            Score::Cp(cp) if cp.abs() <= rules.opening_bound => break (start, choice),
            _ => discarded += 1,
        }
    };

    let mut pos = start.clone();
    let mut moves: Vec<Move> = Vec::new();
    let mut plies: Vec<Ply> = Vec::new();
    let mut tree = Vec::new();
    // Keys since the last capture or pawn move, for threefold repetition.
    let mut keys: HashMap<u64, u32> = HashMap::new();
    keys.insert(key_of(&pos), 1);
    let mut next = Some(first);
    let (result, ending) = loop {
        // Endings by rule, in the position now on the board.
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break if pos.is_check() {
                (if pos.turn() == Color::White { 0.0 } else { 1.0 }, Ending::Checkmate)
            } else {
                (0.5, Ending::Stalemate)
            };
        }
        if pos.is_insufficient_material() {
            break (0.5, Ending::InsufficientMaterial);
        }
        if pos.halfmoves() >= 100 {
            break (0.5, Ending::FiftyMoves);
        }
        if keys[&key_of(&pos)] >= 3 {
            break (0.5, Ending::Repetition);
        }
        if plies.len() >= rules.max_plies {
            break (0.5, Ending::MaxPlies);
        }

        let choice = match next.take() {
            Some(c) => c,
            None => {
                if abandon() {
                    return Ok(None);
                }
                player.choose(&start, &moves, &pos)?
            }
        };
        let white = |v: i32| if pos.turn() == Color::White { v } else { -v };
        let score = match choice.score {
            Score::Cp(cp) => Some(white(cp)),
            Score::Mate(_) => None,
        };
        plies.push(Ply { mv: choice.mv, score });

        // Endings by the score just found.
        if let Score::Mate(m) = choice.score {
            break (if white(m) > 0 { 1.0 } else { 0.0 }, Ending::MateScore);
        }
        let recent = |n: usize| plies[plies.len().saturating_sub(n)..].iter().map(|p| p.score);
        if plies.len() >= rules.win_plies {
            let all = |f: &dyn Fn(i32) -> bool| recent(rules.win_plies).all(|s| s.is_some_and(f));
            if all(&|s| s >= rules.win_bound) {
                break (1.0, Ending::WinAdjudicated);
            }
            if all(&|s| s <= -rules.win_bound) {
                break (0.0, Ending::WinAdjudicated);
            }
        }
        if game_ply(&pos) >= rules.draw_after
            && plies.len() >= rules.draw_plies
            && recent(rules.draw_plies).all(|s| s.is_some_and(|s| s.abs() <= rules.draw_bound))
        {
            break (0.5, Ending::DrawAdjudicated);
        }

        ensure!(legal.contains(&choice.mv), "the player chose an illegal move");
        // The opening's randomness is drawn: what the generator gives now changes no game.
        if tree_rate > 0.0 && f64::from(rng.unit_f32()) < tree_rate {
            if abandon() {
                return Ok(None);
            }
            let found = tree_position(player, &start, &moves, &pos, &choice.pv, &mut rng)?;
            tree.extend(found);
        }
        if choice.mv.is_zeroing() {
            keys.clear();
        }
        pos.play_unchecked(choice.mv);
        moves.push(choice.mv);
        *keys.entry(key_of(&pos)).or_insert(0) += 1;
    };
    Ok(Some(Played { game: Game { start, result, plies }, ending, discarded, tree }))
}

/// What a run produced.
#[derive(Debug, Default)]
pub struct Summary {
    /// Games written.
    pub games: u64,
    /// Positions (plies) written.
    pub positions: u64,
    /// Tree positions written (`--tree-out`).
    pub tree_positions: u64,
    /// Openings discarded by the opening bound.
    pub discarded: u64,
    /// Games per ending.
    pub endings: Vec<(Ending, u64)>,
    /// Results, lengths and scores of the games written.
    pub tally: Tally,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Upper bounds (exclusive) of the score buckets of [`Tally::scores`], centipawns from
/// White's view; the bucket after the last holds the rest, and one more the mates.
const SCORE_EDGES: [i32; 8] = [-1000, -500, -200, -50, 50, 200, 500, 1000];
/// Plies per game bucket of [`Tally::lengths`].
const LENGTH_STEP: usize = 40;
/// Width of the longest bar of a text histogram.
const BAR_WIDTH: u64 = 30;

/// What the games of a run looked like, for the summary a person reads at its end.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    /// Games by White's result: wins, draws, losses.
    pub results: [u64; 3],
    /// Plies of each game.
    pub lengths: Vec<u32>,
    /// Positions by score bucket (see `SCORE_EDGES`), the last for mate scores.
    pub scores: [u64; SCORE_EDGES.len() + 2],
}

impl Tally {
    /// Counts a game.
    pub fn add(&mut self, game: &Game) {
        let result = if game.result > 0.75 {
            0
        } else if game.result > 0.25 {
            1
        } else {
            2
        };
        self.results[result] += 1;
        self.lengths.push(game.plies.len() as u32);
        for ply in &game.plies {
            let bucket = match ply.score {
                Some(cp) => SCORE_EDGES.iter().take_while(|&&edge| cp >= edge).count(),
                None => SCORE_EDGES.len() + 1,
            };
            self.scores[bucket] += 1;
        }
    }

    /// The tally as text: results, plies per game and scores, the last two as histograms.
    pub fn report(&self) -> String {
        let games = self.lengths.len() as u64;
        if games == 0 {
            return "no games\n".into();
        }
        let share = |n: u64| 100.0 * n as f64 / games as f64;
        let [wins, draws, losses] = self.results;
        let mut text = format!(
            "results: 1-0 {wins} ({:.1} %), 1/2-1/2 {draws} ({:.1} %), 0-1 {losses} ({:.1} %)\n",
            share(wins),
            share(draws),
            share(losses)
        );
        let mut sorted = self.lengths.clone();
        sorted.sort_unstable();
        let mean = sorted.iter().map(|&l| f64::from(l)).sum::<f64>() / games as f64;
        text += &format!(
            "plies per game: min {}, median {}, mean {mean:.1}, max {}\n",
            sorted[0],
            sorted[sorted.len() / 2],
            sorted[sorted.len() - 1]
        );
        let longest = sorted[sorted.len() - 1] as usize;
        let lengths: Vec<(String, u64)> = (0..=longest / LENGTH_STEP)
            .map(|b| {
                let (lo, hi) = (b * LENGTH_STEP, (b + 1) * LENGTH_STEP - 1);
                let n = sorted.iter().filter(|&&l| (lo..=hi).contains(&(l as usize))).count();
                (format!("{lo}-{hi}"), n as u64)
            })
            .collect();
        text += &histogram(&lengths);
        text += "scores (centipawns, White's view):\n";
        let names = (0..self.scores.len()).map(|b| match b {
            0 => format!("< {}", SCORE_EDGES[0]),
            b if b == SCORE_EDGES.len() => format!(">= {}", SCORE_EDGES[b - 1]),
            b if b > SCORE_EDGES.len() => "mate".into(),
            b => format!("{} to {}", SCORE_EDGES[b - 1], SCORE_EDGES[b] - 1),
        });
        let scores: Vec<(String, u64)> = names.zip(self.scores).collect();
        text + &histogram(&scores)
    }
}

/// Labelled counts as text bars, the largest `BAR_WIDTH` characters long.
fn histogram(rows: &[(String, u64)]) -> String {
    let most = rows.iter().map(|r| r.1).max().unwrap_or(0).max(1);
    let label = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let mut text = String::new();
    for (name, n) in rows {
        let bar = "#".repeat((n * BAR_WIDTH).div_ceil(most) as usize);
        text += &format!("  {name:>label$}  {bar:<width$}  {n}\n", width = BAR_WIDTH as usize);
    }
    text
}

/// Runs `nue datagen`.
pub fn run(args: &DatagenArgs) -> Result<Summary> {
    ensure!(args.threads >= 1, "--threads must be at least 1");
    ensure!(
        args.win_plies >= 1 && args.draw_plies >= 1,
        "--win-plies and --draw-plies must be at least 1"
    );
    if args.games == Some(0) {
        bail!("--games must be at least 1");
    }
    if let Some(tree_out) = &args.tree_out {
        ensure!(
            args.tree_rate > 0.0 && args.tree_rate <= 1.0,
            "--tree-rate must lie above 0 and at most 1"
        );
        ensure!(tree_out != &args.out, "--tree-out must be another file than --out");
        ensure!(
            !crate::train::data::is_chain(tree_out),
            "--tree-out {} would be read as game chains (its name holds '.chain.'); \
             name it like positions.txt.gz",
            tree_out.display()
        );
    }
    let tree_rate = if args.tree_out.is_some() { args.tree_rate } else { 0.0 };
    let openings = match &args.book {
        Some(path) => Openings::Book(book::load(path)?),
        None => Openings::Start,
    };
    let random_plies = args.random_plies.unwrap_or(if args.book.is_some() { 0 } else { 8 });
    let rules = Rules {
        opening_bound: args.opening_bound,
        win_bound: args.win_bound,
        win_plies: args.win_plies,
        draw_after: args.draw_after,
        draw_bound: args.draw_bound,
        draw_plies: args.draw_plies,
        max_plies: args.max_plies,
    };
    let nodes = args.nodes.unwrap_or(DEFAULT_NODES);
    let make_player = || -> Result<Box<dyn Player>> {
        Ok(match &args.engine {
            Some(path) => {
                let go = match args.depth {
                    Some(d) => format!("go depth {d}"),
                    None => format!("go nodes {nodes}"),
                };
                Box::new(UciPlayer::start(path, &args.engine_options, go)?)
            }
            None => Box::new(NuePlayer::new(args.hash, nodes, args.depth)?),
        })
    };
    // Check the player before anything is written.
    drop(make_player()?);

    let already = count_games(&args.out)?;
    let mut writer = ChainWriter::append(&args.out)?;
    let mut tree_writer = args.tree_out.as_deref().map(ChainWriter::append).transpose()?;
    if already > 0 {
        eprintln!(
            "{}: {already} games already there; continuing at game {already}",
            args.out.display()
        );
    }
    let first = already;
    let end = args.games.map(|g| first + g);
    let deadline = args.seconds.map(|s| Instant::now() + Duration::from_secs(s));
    let next_index = AtomicU64::new(first);
    let stop = AtomicBool::new(false);
    let abandon = || {
        stop.load(Relaxed)
            || SIGNALLED.load(Relaxed)
            || deadline.is_some_and(|d| Instant::now() >= d)
    };

    let bar = progress_bar(args.games, args.seconds);
    let start_time = Instant::now();
    let mut last_line = start_time;
    let mut summary = Summary::default();
    let mut endings: HashMap<Ending, u64> = HashMap::new();
    let (tx, rx) = mpsc::sync_channel::<Result<Played>>(4 * args.threads);
    let error = std::thread::scope(|scope| -> Option<anyhow::Error> {
        for w in 0..args.threads {
            let tx = tx.clone();
            let (next_index, abandon, openings, rules, make_player) =
                (&next_index, &abandon, &openings, &rules, &make_player);
            let seed = args.seed;
            std::thread::Builder::new()
                .name(format!("datagen-{w}"))
                .stack_size(SEARCH_STACK_BYTES)
                .spawn_scoped(scope, move || {
                    let mut player = match make_player() {
                        Ok(p) => p,
                        Err(e) => return drop(tx.send(Err(e))),
                    };
                    loop {
                        let index = next_index.fetch_add(1, Relaxed);
                        if end.is_some_and(|e| index >= e) || abandon() {
                            return;
                        }
                        let played = play_game(
                            &mut *player,
                            openings,
                            random_plies,
                            rules,
                            seed,
                            index,
                            tree_rate,
                            abandon,
                        );
                        match played {
                            Ok(Some(p)) => {
                                if tx.send(Ok(p)).is_err() {
                                    return;
                                }
                            }
                            Ok(None) => return,
                            Err(e) => return drop(tx.send(Err(e))),
                        }
                    }
                })
                .expect("a datagen thread");
        }
        drop(tx);
        let mut error = None;
        loop {
            match rx.recv_timeout(Duration::from_millis(500)) {
                Ok(Ok(played)) => match write_played(&mut writer, tree_writer.as_mut(), &played) {
                    Ok(()) => {
                        summary.games += 1;
                        summary.tree_positions += played.tree.len() as u64;
                        summary.positions += played.game.plies.len() as u64;
                        summary.discarded += played.discarded as u64;
                        summary.tally.add(&played.game);
                        *endings.entry(played.ending).or_insert(0) += 1;
                    }
                    Err(e) => {
                        error.get_or_insert(e);
                        stop.store(true, Relaxed);
                    }
                },
                Ok(Err(e)) => {
                    error.get_or_insert(e);
                    stop.store(true, Relaxed);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            update_bar(&bar, &summary, start_time, args.games, args.seconds);
            // Without a terminal the bar is hidden: a log gets a line a minute instead.
            if bar.is_hidden() && last_line.elapsed() >= PROGRESS_LINE_EVERY {
                last_line = Instant::now();
                eprintln!("{}", progress_message(&summary, start_time));
            }
        }
        error
    });
    bar.finish_and_clear();
    summary.seconds = start_time.elapsed().as_secs_f64();
    summary.endings = endings.into_iter().collect();
    summary.endings.sort();
    if let Some(e) = error {
        eprintln!("{} games written before the error", summary.games);
        return Err(e);
    }
    if SIGNALLED.load(Relaxed) {
        eprintln!("stopped by a signal; the games in progress were dropped");
    }
    eprintln!(
        "{}: {} games, {} positions in {:.0} s ({:.0} positions/s); {} openings discarded",
        args.out.display(),
        summary.games,
        summary.positions,
        summary.seconds,
        summary.positions as f64 / summary.seconds.max(1e-9),
        summary.discarded
    );
    if let Some(tree_out) = &args.tree_out {
        eprintln!(
            "{}: {} tree positions ({:.2} a game)",
            tree_out.display(),
            summary.tree_positions,
            summary.tree_positions as f64 / summary.games.max(1) as f64
        );
    }
    let endings: Vec<String> = summary.endings.iter().map(|(e, n)| format!("{e:?} {n}")).collect();
    eprintln!("endings: {}", endings.join(", "));
    eprint!("{}", summary.tally.report());
    Ok(summary)
}

/// Writes a finished game, then its tree positions (if they have a file), each as one
/// gzip member, so that a run killed between games leaves whole games in both files.
fn write_played(
    writer: &mut ChainWriter,
    tree_writer: Option<&mut ChainWriter>,
    played: &Played,
) -> Result<()> {
    writer.write(&played.game)?;
    match tree_writer {
        Some(w) if !played.tree.is_empty() => {
            let lines: String =
                played.tree.iter().map(|t| t.to_line(played.game.result) + "\n").collect();
            w.write_text(&lines)
        }
        _ => Ok(()),
    }
}

/// Set by the first SIGINT or SIGTERM once [`stop_on_signal`] is installed.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

/// How often a run without a terminal prints its progress.
const PROGRESS_LINE_EVERY: Duration = Duration::from_secs(60);

/// Makes SIGINT and SIGTERM stop [`run`] the way `--seconds` does (the summary is still
/// printed); a second signal exits at once with status 130. Once per process: the
/// binary calls it, the tests do not.
pub fn stop_on_signal() -> Result<()> {
    ctrlc::set_handler(|| {
        if SIGNALLED.swap(true, Relaxed) {
            std::process::exit(130);
        }
    })
    .context("cannot install the SIGINT/SIGTERM handler")
}

fn progress_bar(games: Option<u64>, seconds: Option<u64>) -> ProgressBar {
    let len = games.or(seconds).unwrap_or(0);
    let bar = if len > 0 { ProgressBar::new(len) } else { ProgressBar::new_spinner() };
    let unit = if games.is_some() { "games" } else { "s" };
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "[{{bar:30}}] {{pos}}/{{len}} {unit} {{msg}} ETA {{eta}}"
        ))
        .expect("a valid template")
        .progress_chars("=> "),
    );
    bar
}

fn update_bar(
    bar: &ProgressBar,
    summary: &Summary,
    start: Instant,
    games: Option<u64>,
    seconds: Option<u64>,
) {
    let elapsed = start.elapsed().as_secs_f64();
    let position = match (games, seconds) {
        (Some(_), _) => summary.games,
        (None, Some(s)) => (elapsed as u64).min(s),
        (None, None) => summary.games,
    };
    bar.set_position(position);
    bar.set_message(progress_message(summary, start));
}

fn progress_message(summary: &Summary, start: Instant) -> String {
    let elapsed = start.elapsed().as_secs_f64();
    let tree = match summary.tree_positions {
        0 => String::new(),
        n => format!(", {n} tree positions"),
    };
    format!(
        "{} games, {} positions, {:.0} positions/s{tree}",
        summary.games,
        summary.positions,
        summary.positions as f64 / elapsed.max(1e-9)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_scores_are_read_and_bounds_skipped() {
        let s =
            parse_info_score("info depth 5 seldepth 6 multipv 1 score cp -31 nodes 900 pv e2e4");
        assert_eq!(s, Some(Score::Cp(-31)));
        assert_eq!(parse_info_score("info depth 9 score mate -3 pv a1a2"), Some(Score::Mate(-1)));
        assert_eq!(parse_info_score("info depth 9 score cp 40 lowerbound nodes 5"), None);
        assert_eq!(parse_info_score("info depth 9 multipv 2 score cp 40"), None);
        assert_eq!(parse_info_score("info string hello"), None);
    }

    #[test]
    fn the_tally_counts_results_lengths_and_scores() {
        let fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        let (start, moves, _) = game(fen, "e2e4 e7e5 g1f3");
        let scored = |scores: &[Option<i32>]| -> Vec<Ply> {
            moves.iter().zip(scores).map(|(&mv, &score)| Ply { mv, score }).collect()
        };
        let mut tally = Tally::default();
        let plies = scored(&[Some(30), Some(-2000), None]);
        tally.add(&Game { start: start.clone(), result: 1.0, plies });
        tally.add(&Game { start, result: 0.5, plies: scored(&[Some(0), Some(1000)]) });
        assert_eq!(tally.results, [1, 1, 0]);
        assert_eq!(tally.lengths, [3, 2]);
        assert_eq!(tally.scores, [1, 0, 0, 0, 2, 0, 0, 0, 1, 1]);
        let text = tally.report();
        for line in [
            "results: 1-0 1 (50.0 %), 1/2-1/2 1 (50.0 %), 0-1 0 (0.0 %)",
            "plies per game: min 2, median 3, mean 2.5, max 3",
            &format!("  0-39  {}  2", "#".repeat(30)),
            // Labels line up on the right, bars on the left.
            &format!("  {:>13}  {}  2", "-50 to 49", "#".repeat(30)),
            &format!("  {:>13}  {:<30}  1", "mate", "#".repeat(15)),
        ] {
            assert!(text.lines().any(|l| l == line), "{line:?} not in\n{text}");
        }
        assert_eq!(Tally::default().report(), "no games\n");
    }

    /// Plays `line` (UCI moves) from `fen`, and returns the start, the moves and the end.
    fn game(fen: &str, line: &str) -> (Chess, Vec<Move>, Chess) {
        let start = crate::engine::parse_position(fen, CastlingMode::Standard).unwrap();
        let mut pos = start.clone();
        let mut moves = Vec::new();
        for text in line.split_whitespace() {
            let m = crate::engine::parse_move(&pos, text).unwrap();
            pos.play_unchecked(m);
            moves.push(m);
        }
        (start, moves, pos)
    }

    #[test]
    fn the_engine_is_sent_the_game_from_its_last_capture_or_pawn_move() {
        let initial = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        let (start, moves, pos) = game(initial, "g1f3 g8f6 f3g1 f6g8 e2e4 b8c6 g1f3 c6b8");
        let (base, recent) = since_last_irreversible(&start, &moves, &pos);
        assert_eq!(recent, &moves[5..], "the moves after e2e4");
        assert_eq!(base.halfmoves(), 0);
        assert_eq!(base.board(), game(initial, "g1f3 g8f6 f3g1 f6g8 e2e4").2.board());
        let mut replayed = base.clone();
        recent.iter().for_each(|&m| replayed.play_unchecked(m));
        assert_eq!(replayed, pos);

        // The last move a capture: nothing to replay.
        let (start, moves, pos) = game(initial, "e2e4 d7d5 e4d5");
        let (base, recent) = since_last_irreversible(&start, &moves, &pos);
        assert!(recent.is_empty());
        assert_eq!(base, pos);

        // A start whose clock already runs (a book position): the whole game is sent.
        let book = "4k3/8/8/8/8/8/8/R3K3 w - - 30 60";
        let (start, moves, pos) = game(book, "a1a2 e8d8 a2a1");
        let (base, recent) = since_last_irreversible(&start, &moves, &pos);
        assert_eq!((base, recent), (start, &moves[..]));
    }

    /// A player that plays the first legal move, scoring each position with `score`
    /// (White's view, by the number of moves played so far), and expects the last legal
    /// move in reply, then the first again, and so on, for a principal variation of up to
    /// four moves.
    struct Scripted(fn(usize) -> Score);

    impl Player for Scripted {
        fn new_game(&mut self) -> Result<()> {
            Ok(())
        }
        fn choose(&mut self, _: &Chess, moves: &[Move], pos: &Chess) -> Result<Choice> {
            let score = match (self.0)(moves.len()) {
                Score::Cp(v) if pos.turn() == Color::Black => Score::Cp(-v),
                Score::Mate(v) if pos.turn() == Color::Black => Score::Mate(-v),
                s => s,
            };
            let mut line = pos.clone();
            let mut pv = Vec::new();
            for i in 0..4 {
                let legal = line.legal_moves();
                let Some(&m) = (if i % 2 == 0 { legal.first() } else { legal.last() }) else {
                    break;
                };
                line.play_unchecked(m);
                pv.push(m);
            }
            Ok(Choice { mv: pv[0], score, pv })
        }
    }

    fn play_sampling(score: fn(usize) -> Score, rules: &Rules, tree_rate: f64) -> Result<Played> {
        let openings = Openings::Start;
        let played =
            play_game(&mut Scripted(score), &openings, 8, rules, 7, 0, tree_rate, &|| false)?;
        Ok(played.expect("not abandoned"))
    }

    fn play(score: fn(usize) -> Score, rules: &Rules) -> Result<Played> {
        play_sampling(score, rules, 0.0)
    }

    #[test]
    fn info_lines_give_their_principal_variation() {
        let line = "info depth 5 multipv 1 score cp 20 nodes 900 pv e2e4 e7e5 g1f3 zz e1e2\n";
        assert_eq!(info_pv(line), "e2e4 e7e5 g1f3 zz e1e2");
        assert_eq!(info_pv("info depth 5 score cp 20 nodes 900"), "");
        let start = Chess::default();
        // Up to the first word that is not a legal move.
        let pv: Vec<String> = parse_pv(&start, info_pv(line))
            .iter()
            .map(|m| m.to_uci(CastlingMode::Standard).to_string())
            .collect();
        assert_eq!(pv, ["e2e4", "e7e5", "g1f3"]);
        assert!(parse_pv(&start, "e2e5 e2e4").is_empty());
    }

    #[test]
    fn tree_positions_come_from_down_the_line_and_are_quiet() {
        // The score is the number of moves from the start, so a tree position's score
        // says how far down the line it lies.
        let rules = Rules { max_plies: 30, ..Rules::default() };
        let p = play_sampling(|n| Score::Cp(n as i32), &rules, 1.0).unwrap();
        let q = play_sampling(|n| Score::Cp(n as i32), &rules, 0.0).unwrap();
        assert!(q.tree.is_empty());
        assert!(p.tree.len() >= 5, "{} tree positions", p.tree.len());
        assert!(p.tree.len() <= p.game.plies.len());
        // Replay the game to list its positions, with the moves from the start.
        let mut game = vec![(p.game.start.clone(), 0)];
        for (i, ply) in p.game.plies.iter().enumerate() {
            let mut next = game[i].0.clone();
            next.play_unchecked(ply.mv);
            game.push((next, i + 1));
        }
        for t in &p.tree {
            assert!(!t.pos.is_check());
            // Two to four plies down the line searched after some game position...
            let moves = t.score as usize;
            let reachable = (2..=4).filter(|&k| k <= moves && moves - k < game.len()).any(|k| {
                let mut pos = game[moves - k].0.clone();
                for j in 0..k {
                    let legal = pos.legal_moves();
                    pos.play_unchecked(if j % 2 == 0 { legal[0] } else { legal[legal.len() - 1] });
                }
                pos == t.pos
            });
            assert!(reachable, "{} is not down a searched line", t.to_line(p.game.result));
            // ...and off the game itself.
            assert!(game.iter().all(|(g, _)| g != &t.pos));
            // The label's best move (the first legal one) is quiet.
            let first = t.pos.legal_moves()[0];
            assert!(!first.is_capture() && !first.is_promotion());
        }
        let line = p.tree[0].to_line(0.5);
        assert!(line.ends_with(&format!(" | {} | 0.5", p.tree[0].score)), "{line}");
        assert!(crate::train::data::parse_line(&line).is_ok(), "{line}");
    }

    #[test]
    fn a_decisive_score_held_for_the_win_plies_wins() {
        let rules = Rules::default();
        let p = play(|n| Score::Cp(if n == 0 { 0 } else { -1200 }), &rules).unwrap();
        assert_eq!((p.ending, p.game.result), (Ending::WinAdjudicated, 0.0));
        assert_eq!(p.game.plies.len(), 1 + rules.win_plies);
    }

    #[test]
    fn a_level_score_held_late_in_the_game_draws() {
        let rules = Rules { draw_after: 0, draw_plies: 4, ..Rules::default() };
        let p = play(|_| Score::Cp(5), &rules).unwrap();
        assert_eq!((p.ending, p.game.result), (Ending::DrawAdjudicated, 0.5));
        assert_eq!(p.game.plies.len(), 4);
        // Not before `draw_after`: the same game goes on past ply 4.
        let p = play(|_| Score::Cp(5), &Rules { draw_plies: 4, ..Rules::default() }).unwrap();
        assert!(p.game.plies.len() > 4);
    }

    #[test]
    fn a_mate_score_ends_the_game_for_the_side_it_favours() {
        let p = play(|n| if n < 3 { Score::Cp(0) } else { Score::Mate(1) }, &Rules::default());
        let p = p.unwrap();
        assert_eq!((p.ending, p.game.result), (Ending::MateScore, 1.0));
        assert_eq!(p.game.plies.len(), 4);
        assert_eq!(p.game.plies[3].score, None);
    }

    #[test]
    fn openings_beyond_the_bound_are_discarded() {
        let err = play(|_| Score::Cp(500), &Rules::default()).err().unwrap();
        assert!(err.to_string().contains("--opening-bound"), "{err}");
    }
}
