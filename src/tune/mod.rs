//! `nue tune`: an SPSA tune of the search parameters that can be stopped at any moment and
//! resumed later, on this machine or another, and ends where a tune that was never stopped
//! would have ended.
//!
//! A tune is one state file ([`state`]): `nue tune new` writes it, `nue tune run` plays
//! iterations from it and writes it again after each, `nue tune show` and `nue plot tune`
//! read it. An iteration ([`spsa`]) is a few game pairs of θ+ against θ− through fastchess
//! ([`games`]), at a fixed node count, with the tuning build (`--features tune`) on both
//! sides; what it plays depends only on the state and the iteration's number, so a stop
//! loses at most the iteration in flight and the resumed tune plays it again, identically.
//! Before playing, `run` asks the engine its bench ([`probe`]): a different count means a
//! different search, which a tune may only go on with when told why (`--note`), and the
//! note stays in the state with the game count at which it happened.
//!
//! The driver is part of the `nue` binary rather than a script so that its tests (the
//! resumed tune equal to the unstopped one, the refusal of damaged files) run under
//! `cargo test` with the rest, and so that it shares the parameter table, the seedable
//! generator and the plotting code with the engine. docs/tuning.md says how to use it.

pub mod games;
pub mod probe;
pub mod spsa;
pub mod state;

use std::{
    fmt::Write as _,
    io::Write as _,
    path::{Path, PathBuf},
    sync::atomic::{AtomicBool, Ordering::Relaxed},
    time::{Duration, Instant, SystemTime},
};

use anyhow::{bail, ensure, Context, Result};
use sha2::{Digest, Sha256};

pub use self::{
    spsa::{Openings, Plan, Schedule, Tuned},
    state::{Anomalies, Note, Played, State, Step},
};
use crate::search::params::{self, SPSA_LEARNING_RATE};

/// The parameters that act deep in the tree: late move reductions, null-move pruning, the
/// futility and razoring margins, history pruning, the singular-extension margins, the
/// history bonus and its cap, the static-evaluation correction, ProbCut and the
/// aspiration window. Left out: the time management (no clock at a node limit), the
/// exchange values and capture ordering (they act at every node and in quiescence alike),
/// and the depth thresholds whose step is one ply (a perturbation of a whole ply is a
/// different search, for an SPRT to judge rather than SPSA).
pub const DEEP: &[&str] = &[
    "aspiration_delta",
    "razor_margin",
    "rfp_margin",
    "nmp_eval_divisor",
    "probcut_margin",
    "probcut_improving",
    "futility_base",
    "futility_margin",
    "history_prune",
    "singular_margin",
    "double_ext_margin",
    "lmr_base",
    "lmr_divisor",
    "lmr_history_divisor",
    "lmr_non_pv",
    "lmr_tt_pv",
    "lmr_cut_node",
    "lmr_gives_check",
    "lmr_tt_capture",
    "lmr_improving",
    "history_bonus_quadratic",
    "history_bonus_per_ply",
    "history_bonus_offset",
    "history_bonus_max",
    "history_bonus_extra_margin",
    "correction_max",
    "correction_weight",
    "correction_pieces",
];

/// The named parameter sets of `nue tune new --preset`.
pub const PRESETS: &[(&str, &[&str])] = &[("deep", DEEP)];

/// Nodes a move unless told: the depth the search reaches there (docs/tuning.md).
pub const DEFAULT_NODES: u64 = 25_000;
/// Game pairs an iteration unless told (OpenBench's pairs per SPSA workload).
pub const DEFAULT_PAIRS: u64 = 8;
/// The book unless told, from the repository root.
pub const DEFAULT_BOOK: &str = "../shared/books/UHO_4060_v4.epd";

/// The subcommands of `nue tune`.
#[derive(Debug, clap::Subcommand)]
pub enum TuneCommand {
    /// Create a tune's state file: the parameters, the engine and its bench, the book, the
    /// schedule. Plays nothing.
    New(NewArgs),
    /// Play a tune on from its state file, writing it after every iteration, until the
    /// planned games are played, the time is up, or SIGINT/SIGTERM (the iteration in flight
    /// is given up and played again on the next run).
    Run(RunArgs),
    /// Print a tune's progress and values, with the `setoption` and `params.rs` lines of the
    /// values now.
    Show {
        /// The state file.
        state: PathBuf,
    },
}

/// Options of `nue tune new`.
#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// The state file to create (`tune/deep.tune`, say); an existing file is refused.
    pub state: PathBuf,
    /// The tuning build that plays both sides (`cargo build --release --features tune`).
    #[arg(long)]
    pub engine: PathBuf,
    /// A named set of parameters: `deep`.
    #[arg(long, default_value = "deep")]
    pub preset: String,
    /// The parameters to tune instead of a preset, comma-separated.
    #[arg(long, value_delimiter = ',', conflicts_with = "preset")]
    pub params: Vec<String>,
    /// Games to play in all (rounded up to whole iterations).
    #[arg(long, default_value_t = 20_000)]
    pub games: u64,
    /// Nodes a move, each side.
    #[arg(long, default_value_t = DEFAULT_NODES)]
    pub nodes: u64,
    /// Game pairs an iteration.
    #[arg(long, default_value_t = DEFAULT_PAIRS)]
    pub pairs: u64,
    /// Seed of the perturbations and of the order of the openings.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The opening book, EPD.
    #[arg(long, default_value = DEFAULT_BOOK)]
    pub book: PathBuf,
    /// Each engine's hash table, MiB.
    #[arg(long, default_value_t = 16)]
    pub hash: u32,
}

/// Options of `nue tune run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The state file.
    pub state: PathBuf,
    /// The tuning build, when it is no longer where the state says (another machine); its
    /// bench must be the state's unless `--note` says why not.
    #[arg(long)]
    pub engine: Option<PathBuf>,
    /// The book, when it is no longer where the state says; it must be the same book.
    #[arg(long)]
    pub book: Option<PathBuf>,
    /// The fastchess binary.
    #[arg(long, default_value = "fastchess")]
    pub fastchess: PathBuf,
    /// Games at a time (one core each).
    #[arg(long, default_value_t = 2)]
    pub concurrency: usize,
    /// Start no iteration that would end after this many minutes.
    #[arg(long)]
    pub minutes: Option<f64>,
    /// Play at most this many iterations (0: only check the engine and record `--note`).
    #[arg(long)]
    pub iterations: Option<u64>,
    /// A line for the state's notes, at the current game count; required when the
    /// engine's bench differs from the state's (the search changed).
    #[arg(long)]
    pub note: Option<String>,
    /// Append the games to this PGN file.
    #[arg(long)]
    pub pgn: Option<PathBuf>,
}

/// Plays one iteration's games.
pub trait Match {
    /// Plays the games of `plan`: θ+ (`plan.plus`) against θ− (`plan.minus`), one game pair
    /// per opening with colours reversed.
    fn play(&mut self, plan: &Plan) -> Result<Outcome>;
}

/// What came of an iteration's games.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// All were played.
    Played(Played),
    /// The run was told to stop first: the iteration is given up.
    Stopped,
}

/// Where a run stops, besides the end of the tune and a stop signal.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// Start no iteration that would end after this long (judged by the mean iteration so
    /// far in this run).
    pub time: Option<Duration>,
    /// Play at most this many iterations.
    pub iterations: Option<u64>,
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Every planned iteration is played.
    Finished,
    /// The next iteration would have ended past the time limit.
    TimeUp,
    /// The iteration limit was reached.
    IterationLimit,
    /// A stop was asked for (a signal, or the match said so).
    Stopped,
}

/// What one run (a piece of a tune) played.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Piece {
    /// Games played before it.
    pub games_before: u64,
    /// Games played after it.
    pub games_after: u64,
    /// Its results, θ+'s side.
    pub played: Played,
    /// Iterations it played.
    pub iterations: u64,
    /// Time it took.
    pub elapsed: Duration,
    /// Why it ended.
    pub ended: Ended,
}

/// Plays `state` on with `games`, writing it to `path` after every iteration, until it is
/// finished, a limit is reached, or `stop` is set; `progress` hears of every iteration.
pub fn play(
    path: &Path,
    state: &mut State,
    games: &mut dyn Match,
    limits: Limits,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&State, &Piece),
) -> Result<Piece> {
    let started = Instant::now();
    let openings = state.openings();
    let mut piece = Piece {
        games_before: state.games(),
        games_after: state.games(),
        played: Played::default(),
        iterations: 0,
        elapsed: Duration::ZERO,
        ended: Ended::Finished,
    };
    loop {
        piece.elapsed = started.elapsed();
        let ended = if state.finished() {
            Some(Ended::Finished)
        } else if stop.load(Relaxed) {
            Some(Ended::Stopped)
        } else if limits.iterations.is_some_and(|n| piece.iterations >= n) {
            Some(Ended::IterationLimit)
        } else if let Some(limit) = limits.time {
            let mean = piece.elapsed.checked_div(piece.iterations as u32).unwrap_or_default();
            (piece.elapsed + mean > limit).then_some(Ended::TimeUp)
        } else {
            None
        };
        if let Some(ended) = ended {
            piece.ended = ended;
            return Ok(piece);
        }
        let plan = state.plan(&openings);
        match games.play(&plan)? {
            Outcome::Stopped => {
                piece.ended = Ended::Stopped;
                piece.elapsed = started.elapsed();
                return Ok(piece);
            }
            Outcome::Played(played) => {
                ensure!(
                    played.games() == state.schedule.games_per_iteration(),
                    "iteration {} played {} games, not {}",
                    plan.k,
                    played.games(),
                    state.schedule.games_per_iteration()
                );
                state.record(&plan, &played);
                state.save(path)?;
                piece.iterations += 1;
                piece.games_after = state.games();
                piece.played.wins += played.wins;
                piece.played.losses += played.losses;
                piece.played.draws += played.draws;
                piece.played.anomalies.add(&played.anomalies);
                piece.elapsed = started.elapsed();
                progress(state, &piece);
            }
        }
    }
}

/// Compares the engine's bench with the state's. The same count goes on (speed work that
/// keeps the tree keeps the bench). A different one is refused unless `note` says what
/// changed; then the note, with both counts, joins the state's notes at the current game
/// count and the new count becomes the state's. A note given with an unchanged bench is
/// recorded as it is.
pub fn check_bench(state: &mut State, bench: u64, note: Option<&str>) -> Result<()> {
    if bench == state.bench {
        if let Some(note) = note {
            state.note(note);
        }
        return Ok(());
    }
    let Some(note) = note else {
        bail!(
            "the engine's bench is {} nodes, the tune's {} after {} games: the search has \
             changed. Go on with `--note \"what changed\"` (recorded in the state with the game \
             count), or use the engine the tune was playing",
            thousands(bench),
            thousands(state.bench),
            thousands(state.games())
        );
    };
    state.note(&format!("bench {} -> {}: {note}", thousands(state.bench), thousands(bench)));
    state.bench = bench;
    Ok(())
}

/// The parameters of a preset or of a list, each checked against the table.
pub fn choose(preset: &str, list: &[String]) -> Result<(String, Vec<&'static params::Param>)> {
    let (name, names): (String, Vec<&str>) = if list.is_empty() {
        let Some((_, names)) = PRESETS.iter().find(|(p, _)| *p == preset) else {
            let known: Vec<&str> = PRESETS.iter().map(|(p, _)| *p).collect();
            bail!("no preset {preset:?}; the presets are {known:?}");
        };
        (preset.to_string(), names.to_vec())
    } else {
        ("custom".to_string(), list.iter().map(|s| s.trim()).collect())
    };
    let mut chosen = Vec::new();
    for n in names {
        let i = params::find(n).with_context(|| {
            format!("no parameter {n:?} in src/search/params.rs (`nue spsa` lists them)")
        })?;
        let p = &params::PARAMS[i];
        ensure!(!chosen.contains(&p), "{n} is listed twice");
        chosen.push(p);
    }
    Ok((name, chosen))
}

/// The engine's spin options for `names`, in that order, or an error naming the first it
/// lacks.
fn engine_ranges(
    engine: &Path,
    names: &[&str],
) -> Result<(probe::Identity, Vec<probe::SpinOption>)> {
    let identity = probe::identify(engine)?;
    let mut options = Vec::new();
    for name in names {
        let Some(option) = identity.spins.iter().find(|o| o.name.eq_ignore_ascii_case(name)) else {
            bail!(
                "{} has no option {name}: it is not a tuning build (build it with `cargo build \
                 --release --features tune`) or not of this commit",
                engine.display()
            );
        };
        options.push(option.clone());
    }
    Ok((identity, options))
}

/// A book's positions (its non-empty lines) and SHA-256.
pub fn read_book(path: &Path) -> Result<(Vec<String>, String)> {
    let bytes =
        std::fs::read(path).with_context(|| format!("cannot read the book {}", path.display()))?;
    let digest = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    let text =
        String::from_utf8(bytes).with_context(|| format!("{} is not text", path.display()))?;
    let positions: Vec<String> =
        text.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect();
    ensure!(!positions.is_empty(), "the book {} holds no positions", path.display());
    Ok((positions, digest))
}

/// `nue tune new`.
pub fn new(args: &NewArgs) -> Result<State> {
    ensure!(
        !args.state.exists(),
        "{} exists: go on with `nue tune run {}`, or remove it to start again",
        args.state.display(),
        args.state.display()
    );
    ensure!(
        args.pairs > 0 && args.games > 0 && args.nodes > 0,
        "games, pairs and nodes must be positive"
    );
    let (preset, chosen) = choose(&args.preset, &args.params)?;
    let names: Vec<&str> = chosen.iter().map(|p| p.name).collect();
    ensure!(args.engine.is_file(), "no engine at {}", args.engine.display());
    let (identity, options) = engine_ranges(&args.engine, &names)?;
    let bench = probe::bench(&args.engine)?;
    let (positions, book_sha256) = read_book(&args.book)?;
    let games_per_iteration = 2 * args.pairs;
    let schedule = Schedule::new(args.games.div_ceil(games_per_iteration), args.pairs);
    // The engine's own default and range: the start is the search it plays now, and the
    // range is what it accepts. The step is this table's c_end.
    let params = chosen
        .iter()
        .zip(&options)
        .map(|(p, o)| {
            let int = |v: i64| i32::try_from(v).with_context(|| format!("{} range {v}", p.name));
            let range = (int(o.min)?, int(o.max)?);
            let gains = (f64::from(p.step), SPSA_LEARNING_RATE);
            Ok(Tuned::new(p.name, o.default as f64, range, gains, &schedule))
        })
        .collect::<Result<Vec<_>>>()?;
    let state = State {
        preset,
        engine: args.engine.clone(),
        bench,
        book: args.book.clone(),
        book_sha256,
        book_positions: positions.len(),
        seed: args.seed,
        nodes: args.nodes,
        hash_mib: args.hash,
        schedule,
        iteration: 0,
        wins: 0,
        losses: 0,
        draws: 0,
        anomalies: Anomalies::default(),
        params,
        notes: Vec::new(),
        steps: Vec::new(),
    };
    if let Some(folder) = args.state.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("cannot make {}", folder.display()))?;
    }
    state.save(&args.state)?;
    eprintln!(
        "wrote {}: {} parameters ({}), {} iterations of {} pairs ({} games) at {} nodes, \
         engine {} ({}, bench {}); play it with `nue tune run {}`",
        args.state.display(),
        state.params.len(),
        state.preset,
        state.schedule.iterations,
        state.schedule.pairs,
        thousands(state.schedule.planned_games()),
        thousands(state.nodes),
        args.engine.display(),
        identity.name,
        thousands(bench),
        args.state.display()
    );
    Ok(state)
}

/// Set by the first SIGINT, SIGTERM or SIGHUP once [`stop_on_signal`] is installed.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

/// Makes SIGINT, SIGTERM and SIGHUP stop `nue tune run` after giving up the iteration in
/// flight; a second signal ends the process at once (fastchess, started through `setpriv`,
/// follows it). Once per process: the binary calls it, the tests do not.
pub fn stop_on_signal() -> Result<()> {
    ctrlc::set_handler(|| {
        if SIGNALLED.swap(true, Relaxed) {
            std::process::exit(130);
        }
    })
    .context("cannot install the signal handler")
}

/// `nue tune run`.
pub fn run(args: &RunArgs) -> Result<Piece> {
    let path = &args.state;
    let mut state = State::load(path)?;
    let will_play = !state.finished() && args.iterations != Some(0);
    let fastchess = if will_play { Some(games::require_fastchess(&args.fastchess)?) } else { None };
    if let Some(engine) = &args.engine {
        state.engine = engine.clone();
    }
    ensure!(
        state.engine.is_file(),
        "no engine at {} (give the tuning build's path with --engine)",
        state.engine.display()
    );
    if let Some(book) = &args.book {
        state.book = book.clone();
    }
    let (positions, digest) = read_book(&state.book)?;
    ensure!(
        digest == state.book_sha256 && positions.len() == state.book_positions,
        "the book {} is not the one this tune plays (SHA-256 {}, the tune's {}): give the \
         tune's book with --book",
        state.book.display(),
        digest,
        state.book_sha256
    );
    let names: Vec<String> = state.params.iter().map(|p| p.name.clone()).collect();
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (identity, _) = engine_ranges(&state.engine, &name_refs)?;
    eprintln!("checking the bench of {} ({})", state.engine.display(), identity.name);
    let bench = probe::bench(&state.engine)?;
    check_bench(&mut state, bench, args.note.as_deref())?;
    state.save(path)?;
    let Some(fastchess) = fastchess else {
        let piece = Piece {
            games_before: state.games(),
            games_after: state.games(),
            played: Played::default(),
            iterations: 0,
            elapsed: Duration::ZERO,
            ended: if state.finished() { Ended::Finished } else { Ended::IterationLimit },
        };
        eprintln!("{}", summary(&piece, args.concurrency, &identity.name));
        return Ok(piece);
    };
    let absolute = |p: &Path| -> Result<PathBuf> {
        Ok(if p.is_absolute() { p.to_path_buf() } else { std::env::current_dir()?.join(p) })
    };
    let mut games = games::Fastchess {
        exe: fastchess,
        setpriv: games::find_program(Path::new("setpriv")),
        engine: absolute(&state.engine)?,
        names,
        nodes: state.nodes,
        hash_mib: state.hash_mib,
        concurrency: args.concurrency.max(1),
        book: positions,
        pgn: args.pgn.as_deref().map(absolute).transpose()?,
        stop: &SIGNALLED,
    };
    games::sweep_scratch();
    if games.setpriv.is_none() {
        eprintln!(
            "note: setpriv not found: if nue is killed with SIGKILL, fastchess finishes its \
             iteration alone"
        );
    }
    let limits = Limits {
        time: args.minutes.map(|m| Duration::from_secs_f64(m.max(0.0) * 60.0)),
        iterations: args.iterations,
    };
    eprintln!(
        "playing {} from iteration {} of {} ({} of {} games), {} at a time",
        path.display(),
        state.iteration + 1,
        state.schedule.iterations,
        thousands(state.games()),
        thousands(state.schedule.planned_games()),
        games.concurrency
    );
    let piece = play(path, &mut state, &mut games, limits, &SIGNALLED, &mut |state, piece| {
        eprintln!("{}", progress_line(state, piece));
    })?;
    eprintln!("{}", summary(&piece, games.concurrency, &identity.name));
    Ok(piece)
}

/// One line per iteration: where the tune stands and what this run has played.
pub fn progress_line(state: &State, piece: &Piece) -> String {
    let s = &state.schedule;
    let mean = piece.elapsed.as_secs_f64() / piece.iterations.max(1) as f64;
    let left = (s.iterations - state.iteration) as f64 * mean;
    let last = state.steps.last();
    let mut line = format!(
        "iteration {}/{}  games {}/{}  W{} L{} D{}",
        state.iteration,
        s.iterations,
        thousands(state.games()),
        thousands(s.planned_games()),
        state.wins,
        state.losses,
        state.draws,
    );
    if let Some(step) = last {
        let _ = write!(line, " (this one {}-{}-{})", step.wins, step.losses, step.draws);
    }
    let _ = write!(
        line,
        "  elapsed {}  {:.1} s an iteration, {} to the end",
        clock(piece.elapsed.as_secs_f64()),
        mean,
        clock(left)
    );
    if piece.played.anomalies.total() > 0 {
        let _ = write!(line, "  anomalies this run: {}", anomalies(&piece.played.anomalies));
    }
    line
}

/// The end of a run, as a row for docs/tuning.md's table of runs: date (UTC), games
/// before and after, the run's W/L/D from θ+'s side, the machine, then the engine, time
/// and anomalies.
pub fn summary(piece: &Piece, concurrency: usize, engine: &str) -> String {
    let p = &piece.played;
    let ended = match piece.ended {
        Ended::Finished => "tune finished",
        Ended::TimeUp => "time up",
        Ended::IterationLimit => "iteration limit",
        Ended::Stopped => "stopped",
    };
    format!(
        "| {} | {} → {} | W{} L{} D{} | {}, concurrency {} | {}, {} iteration{} in {}, {}; \
         anomalies: {} |",
        today(),
        thousands(piece.games_before),
        thousands(piece.games_after),
        p.wins,
        p.losses,
        p.draws,
        machine(),
        concurrency,
        probe::commit_of(engine).map_or_else(|| engine.to_string(), |c| format!("engine `{c}`")),
        piece.iterations,
        if piece.iterations == 1 { "" } else { "s" },
        clock(piece.elapsed.as_secs_f64()),
        ended,
        if p.anomalies.total() == 0 { "none".to_string() } else { anomalies(&p.anomalies) }
    )
}

fn anomalies(a: &Anomalies) -> String {
    format!(
        "{} crashes, {} stalls, {} illegal moves, {} time losses",
        a.crashes, a.stalls, a.illegal_moves, a.time_losses
    )
}

/// `nue tune show`: the state in words and tables.
pub fn show(state: &State) -> String {
    let s = &state.schedule;
    let k = (state.iteration + 1).min(s.iterations);
    let mut t = String::new();
    let _ = writeln!(
        t,
        "preset {}, {} parameters; engine {} (bench {})",
        state.preset,
        state.params.len(),
        state.engine.display(),
        thousands(state.bench)
    );
    let _ = writeln!(
        t,
        "iteration {} of {}, games {} of {} ({:.1} %); θ+ W{} L{} D{}; anomalies: {}",
        state.iteration,
        s.iterations,
        thousands(state.games()),
        thousands(s.planned_games()),
        100.0 * state.games() as f64 / s.planned_games() as f64,
        state.wins,
        state.losses,
        state.draws,
        if state.anomalies.total() == 0 { "none".into() } else { anomalies(&state.anomalies) }
    );
    let _ = writeln!(
        t,
        "{} nodes a move, hash {} MiB, {} pairs an iteration, seed {}, book {} ({} positions)",
        thousands(state.nodes),
        state.hash_mib,
        s.pairs,
        state.seed,
        state.book.display(),
        thousands(state.book_positions as u64)
    );
    let _ = writeln!(t, "schedule: alpha {}, gamma {}, A {}", s.alpha, s.gamma, s.big_a);
    for note in &state.notes {
        let _ = writeln!(t, "note at {} games: {}", thousands(note.games), note.text);
    }
    let _ = writeln!(
        t,
        "\n{:<28} {:>10} {:>7} {:>9} {:>6} {:>6} {:>6} {:>8} {:>9}",
        "parameter", "value", "start", "Δ/c_end", "min", "max", "c_end", "c_k", "r_k"
    );
    for p in &state.params {
        let _ = writeln!(
            t,
            "{:<28} {:>10.2} {:>7} {:>+9.2} {:>6} {:>6} {:>6} {:>8.2} {:>9.5}",
            p.name,
            p.value,
            p.start,
            (p.value - p.start) / p.c_end,
            p.min,
            p.max,
            p.c_end,
            s.c_k(p, k),
            s.r_k(p, k)
        );
    }
    let _ = writeln!(t, "\nThe values now, as UCI commands:");
    for p in &state.params {
        let _ = writeln!(t, "setoption name {} value {}", p.name, p.rounded());
    }
    let _ = writeln!(t, "\nAs fastchess engine options (tools/screen.sh takes them after a path):");
    let options: Vec<String> =
        state.params.iter().map(|p| format!("option.{}={}", p.name, p.rounded())).collect();
    let _ = writeln!(t, "{}", options.join(" "));
    let _ = writeln!(t, "\nAs lines of src/search/params.rs:");
    for p in &state.params {
        let _ = writeln!(
            t,
            "    {} = {}, {}..={}, step {};",
            p.name,
            p.rounded(),
            p.min,
            p.max,
            p.c_end
        );
    }
    t
}

/// The series of `nue plot tune`: each parameter's value against the games played.
pub fn paths(state: &State) -> Vec<crate::plot::ParamPath> {
    let per_iteration = state.schedule.games_per_iteration() as f64;
    state
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| crate::plot::ParamPath {
            name: p.name.clone(),
            start: p.start,
            c_end: p.c_end,
            value: p.value,
            points: std::iter::once((0.0, p.start))
                .chain(state.steps.iter().map(|s| (s.k as f64 * per_iteration, s.values[i])))
                .collect(),
        })
        .collect()
}

/// Dispatches `nue tune`.
pub fn main(command: &TuneCommand) -> Result<()> {
    match command {
        TuneCommand::New(args) => new(args).map(|_| ()),
        TuneCommand::Run(args) => {
            stop_on_signal()?;
            run(args).map(|_| ())
        }
        TuneCommand::Show { state } => {
            let text = show(&State::load(state)?);
            std::io::stdout().write_all(text.as_bytes())?;
            Ok(())
        }
    }
}

/// `n` with thousands separated by commas, as the docs write counts.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Seconds as `h:mm:ss`.
fn clock(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// Today's date in UTC, `YYYY-MM-DD`.
fn today() -> String {
    let days = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// This machine in a few words: its cores and processor.
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, m)| m.trim())
        })
        .unwrap_or("unknown processor");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{cores} × {model}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deep_preset_names_table_parameters_and_no_time_management() {
        let (name, chosen) = choose("deep", &[]).unwrap();
        assert_eq!(name, "deep");
        assert!((20..=30).contains(&chosen.len()), "{}", chosen.len());
        assert!(chosen.iter().all(|p| !p.name.starts_with("tm_")));
        assert!(choose("nope", &[]).unwrap_err().to_string().contains("presets"));
        let err = choose("deep", &["rfp_margin".into(), "no_such".into()]).unwrap_err();
        assert!(err.to_string().contains("no_such"));
        assert_eq!(choose("deep", &["lmr_base".into()]).unwrap().0, "custom");
    }

    #[test]
    fn counts_and_dates_are_written_as_the_docs_write_them() {
        assert_eq!(thousands(2_240_761), "2,240,761");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(clock(3725.0), "1:02:05");
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_794), (2026, 12, 7));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
