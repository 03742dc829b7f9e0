//! `nue datagen`: self-play games for training, written as game chains
//! ([`crate::chain`]). The players live in `player.rs`, a game and its rules in `game.rs`,
//! the summary's counts in `tally.rs`; this file holds the options and the run.
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
//! engine (`--engine`), which both plays and labels; or Nue's search plays and a UCI
//! engine (`--label-engine`, at `--label-depth`) scores every position it reaches. Every
//! worker thread has its own player; one writer appends finished games to the file, one
//! gzip member each, so a killed run loses only its games in progress. Game `i` draws its
//! randomness from the seed and `i` alone, so a one-thread run reproduces exactly, and a
//! run appending to a file continues the numbering where the file ends.
//!
//! With `--tree-out`, a run also writes positions from inside the searches' trees, the
//! kind of data that tests with nodchip's Stockfish NNUE trainer found worth +26 ± 18 Elo
//! over principal-variation positions at 100 M positions: for each searched move (or a
//! `--tree-rate` share of them) a position two or more plies down its principal variation.
//! Once the game is over, those it did not reach itself are searched by the same player at
//! the same depth or nodes (with `--label-engine`, by the labelling engine alone) and kept
//! when quiet (not in check, the best move neither a capture nor a promotion, no mate
//! score); the games are those of a run without them.
//! They go to their own file, one `<fen> | <score> | <result>` line each (the layout `nue
//! train` reads besides chains), with the game's result, written when the game is.
//!
//! The binary stops a run on SIGINT or SIGTERM ([`stop_on_signal`]) as `--seconds` does:
//! no new game starts, the games in progress are dropped, and the summary is printed; a
//! second signal ends the process at once. A UCI player runs in its own process group,
//! so Ctrl-C in a terminal reaches only `nue`, which then closes the engine itself.

mod game;
pub mod genfens;
mod player;
mod tally;

/// Largest score of a kept opening's first search, centipawns either way, unless told.
pub const DEFAULT_OPENING_BOUND: i32 = 400;

/// Random plies at the start of a game: as asked, else 8 from the start position and none
/// after a book position (the book already varies the games).
pub fn random_plies(asked: Option<usize>, with_book: bool) -> usize {
    asked.unwrap_or(if with_book { 0 } else { 8 })
}

use std::{
    collections::HashMap,
    path::PathBuf,
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering::Relaxed},
        mpsc,
    },
    time::{Duration, Instant},
};

use anyhow::{bail, ensure, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

pub use self::{
    game::{play_game, Ending, Openings, Played, Rules, TreePosition},
    player::{Choice, Labelled, NuePlayer, Player, Score, UciPlayer, DEFAULT_NODES},
    tally::Tally,
};
use crate::{
    api::SEARCH_STACK_BYTES,
    book,
    chain::{count_games, ChainWriter},
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
    /// A UCI engine that scores every position instead of the player, which still
    /// chooses the moves: Nue's search plays, this engine labels (the recorded scores,
    /// the adjudication and the opening bound are its own).
    #[arg(long, conflicts_with = "engine", requires = "label_depth")]
    pub label_engine: Option<PathBuf>,
    /// The depth of `--label-engine`'s search of each position.
    #[arg(long, requires = "label_engine")]
    pub label_depth: Option<u32>,
    /// An option for `--label-engine`, `NAME=VALUE` (repeatable); Threads=1 and Hash=16
    /// are sent first.
    #[arg(long = "label-option", value_name = "NAME=VALUE", requires = "label_engine")]
    pub label_options: Vec<String>,
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
    /// Play the game's first plies at random among the near-best moves of a MultiPV search
    /// (`--multipv` lines, within `--multipv-margin` of the best) instead of the best: more
    /// varied openings at the cost of one more search each, since the score recorded is
    /// still that of the usual search of the position.
    #[arg(long, default_value_t = 0)]
    pub multipv_plies: usize,
    /// The lines of those searches.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub multipv: u16,
    /// How far below the best a line may score and still be played, centipawns.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(i32).range(0..))]
    pub multipv_margin: i32,
    /// Discard an opening whose first search scores beyond this, centipawns.
    #[arg(long, default_value_t = DEFAULT_OPENING_BOUND)]
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
    /// variation of a searched move, searched after the game unless the game reached it,
    /// and kept when quiet.
    #[arg(long)]
    pub tree_out: Option<PathBuf>,
    /// The share of searched moves whose principal variation gives a tree position.
    #[arg(long, default_value_t = 1.0, requires = "tree_out")]
    pub tree_rate: f64,
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
    /// Searches made to label tree candidates, the kept ones included.
    pub tree_searches: u64,
    /// Openings discarded by the opening bound.
    pub discarded: u64,
    /// Games per ending.
    pub endings: Vec<(Ending, u64)>,
    /// Results, lengths and scores of the games written.
    pub tally: Tally,
    /// Wall-clock seconds.
    pub seconds: f64,
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
    }
    let tree_rate = if args.tree_out.is_some() { args.tree_rate } else { 0.0 };
    let openings = match &args.book {
        Some(path) => Openings::Book(book::load(path)?),
        None => Openings::Start,
    };
    let random_plies = random_plies(args.random_plies, args.book.is_some());
    let rules = Rules {
        multipv_plies: args.multipv_plies,
        multipv_lines: usize::from(args.multipv),
        multipv_margin: args.multipv_margin,
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
        let player: Box<dyn Player> = match &args.engine {
            Some(path) => {
                let go = match args.depth {
                    Some(d) => format!("go depth {d}"),
                    None => format!("go nodes {nodes}"),
                };
                Box::new(UciPlayer::start(path, &args.engine_options, go)?)
            }
            None => Box::new(NuePlayer::new(args.hash, nodes, args.depth)?),
        };
        Ok(match (&args.label_engine, args.label_depth) {
            (Some(path), Some(depth)) => {
                let go = format!("go depth {depth}");
                let labeller = UciPlayer::start(path, &args.label_options, go)?;
                Box::new(Labelled::new(player, Box::new(labeller)))
            }
            _ => player,
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
                        summary.tree_searches += played.tree_searches as u64;
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
            "{}: {} tree positions ({:.2} a game), kept of {} searched",
            tree_out.display(),
            summary.tree_positions,
            summary.tree_positions as f64 / summary.games.max(1) as f64,
            summary.tree_searches
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

/// Plays `line` (UCI moves) from `fen`, and returns the start, the moves and the end.
#[cfg(test)]
fn replay(fen: &str, line: &str) -> (shakmaty::Chess, Vec<shakmaty::Move>, shakmaty::Chess) {
    use shakmaty::Position;
    let start = crate::engine::parse_position(fen, shakmaty::CastlingMode::Standard).unwrap();
    let mut pos = start.clone();
    let mut moves = Vec::new();
    for text in line.split_whitespace() {
        let m = crate::engine::parse_move(&pos, text).unwrap();
        pos.play_unchecked(m);
        moves.push(m);
    }
    (start, moves, pos)
}
