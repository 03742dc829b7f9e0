//! The `nue` binary: with no arguments it speaks UCI on stdin/stdout; otherwise it runs
//! one of the subcommands below.

use std::{io::Write, path::PathBuf, process::ExitCode};

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

/// Nue, a UCI chess engine with a HalfKP NNUE evaluation.
#[derive(Parser)]
#[command(version = env!("NUE_VERSION"), about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Search the bench positions to a fixed depth; the last line is "<N> nodes <M> nps".
    Bench {
        /// Depth of every search.
        #[arg(default_value_t = nue::bench::DEFAULT_DEPTH)]
        depth: u32,
        /// A .nnue file to search with instead of the default net (the node count is then
        /// that net's, not the pinned one).
        #[arg(long)]
        net: Option<PathBuf>,
    },
    /// Count the leaves of the legal move tree, per root move.
    Perft {
        /// Plies to look ahead.
        depth: u32,
        /// The position (default: the start position).
        #[arg(long)]
        fen: Option<String>,
    },
    /// Print the network's evaluation of a position.
    Eval {
        /// The position (default: the start position).
        #[arg(long)]
        fen: Option<String>,
        /// A .nnue file to use instead of the default net.
        #[arg(long)]
        net: Option<PathBuf>,
    },
    /// A net's side-to-move bias: half the sum of its evaluations of a position with either
    /// side to move, over the bench positions or a data file's; with `--shift`, also write a
    /// copy of the net with every evaluation moved by that many internal units.
    Tempo(nue::tools::TempoArgs),
    /// Generate training data by self-play, as game chains.
    Datagen(nue::datagen::DatagenArgs),
    /// Train a net on the CPU and export it in the Stockfish 12 format.
    Train(nue::train::TrainArgs),
    /// Draw pictures as SVG: training runs' curves, or the default nets' history.
    #[command(subcommand)]
    Plot(Plot),
    /// Fit the win/draw/loss model of `UCI_ShowWDL` to game results: of PGN games with the
    /// searches' scores in their comments, or of training positions evaluated by a net.
    WdlFit(nue::train::wdl_fit::FitArgs),
    /// Print the search and time parameters as OpenBench's SPSA input
    /// (`name, int, value, min, max, c_end, r_end`); the engine tuned must be built with
    /// `--features tune`, which makes each parameter a UCI option.
    Spsa,
    /// Tune the search parameters by SPSA in fixed-node games through fastchess, in pieces
    /// that resume where they stopped: `new` writes a tune's state file, `run` plays on from
    /// it, `show` prints its values (docs/tuning.md).
    #[command(subcommand)]
    Tune(nue::tune::TuneCommand),
    /// Opening positions for data generation, as OpenBench asks for them:
    /// `genfens N seed S book <path|None> [plies=N] [bound=CP] [nodes=N]`, each printed as
    /// `info string genfens <FEN>`: N distinct positions, the openings `nue datagen --seed
    /// S` would play: the start position or a book's, then `plies` random moves (default
    /// 8, or 0 with a book), each kept when a short search (`nodes`, default 5000) scores
    /// it within `bound` centipawns (default 400).
    Genfens {
        /// `N seed S book <path|None>` and the optional extra words.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        words: Vec<String>,
    },
    /// Speak UCI (the same as running without a subcommand).
    Uci,
}

#[derive(Subcommand)]
enum Plot {
    /// Train and validation loss and the learning rate per epoch of one or more `nue train`
    /// runs, in one picture (each run's folder holds its `log.tsv`).
    Training {
        /// The runs' `--out` folders.
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        /// The SVG to write.
        #[arg(long, default_value = "compare.svg")]
        out: PathBuf,
    },
    /// The default nets' Elo against the net they replaced and against Stockfish 12's net,
    /// against the positions seen, from the nets' history (one tab-separated line a net).
    Nets {
        /// The history file.
        #[arg(long, default_value = "nets/history.tsv")]
        history: PathBuf,
        /// The SVG to write.
        #[arg(long, default_value = "nets/history.svg")]
        out: PathBuf,
    },
    /// A tune's parameters against the games played, one panel each, from its state file
    /// (`nue tune`).
    Tune {
        /// The tune's state file.
        state: PathBuf,
        /// The SVG to write.
        out: PathBuf,
    },
}

/// The command line as words. OpenBench passes a command and its arguments as one
/// argument, followed by `quit` (`./engine "genfens 8 seed 1 book None" "quit"`), as a
/// UCI engine would read them from its input: when the first argument holds spaces, the
/// arguments are split into their words and a closing `quit` dropped. (A later argument
/// with spaces, such as a FEN after `--fen`, is left whole.)
fn command_words() -> Vec<String> {
    let mut args: Vec<String> = std::env::args().collect();
    if args.get(1).is_some_and(|a| a.contains(char::is_whitespace)) {
        let words = args
            .split_off(1)
            .into_iter()
            .flat_map(|a| a.split_whitespace().map(str::to_string).collect::<Vec<_>>());
        args.extend(words);
        if args.len() > 2 && args.last().is_some_and(|w| w == "quit") {
            args.pop();
        }
    }
    args
}

fn main() -> ExitCode {
    match run(Cli::parse_from(command_words())) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`nue perft 6 | head`): nothing is left to say.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Whether an error comes from writing to a pipe whose reader has closed it.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        None | Some(Command::Uci) => nue::uci::run(),
        Some(Command::Genfens { words }) => {
            let args = nue::datagen::genfens::GenfensArgs::parse(&words)?;
            let mut out = std::io::stdout().lock();
            nue::datagen::genfens::run(&args, &mut |fen| writeln!(out, "info string genfens {fen}"))
        }
        Some(Command::Bench { depth, net }) => {
            let result = nue::bench::run_with(depth, net.as_deref(), true)?;
            writeln!(std::io::stdout(), "{} nodes {} nps", result.nodes, result.nps())?;
            Ok(())
        }
        Some(Command::Perft { depth, fen }) => nue::tools::perft(depth, fen.as_deref()),
        Some(Command::Eval { fen, net }) => nue::tools::eval(fen.as_deref(), net.as_deref()),
        Some(Command::Tempo(args)) => nue::tools::tempo(&args),
        Some(Command::Datagen(args)) => {
            nue::datagen::stop_on_signal()?;
            nue::datagen::run(&args).map(|_| ())
        }
        Some(Command::Train(args)) => nue::train::run(&args).map(|_| ()),
        Some(Command::Plot(Plot::Training { runs, out })) => {
            nue::plot::compare_runs(&runs, &out)?;
            eprintln!("wrote {}", out.display());
            Ok(())
        }
        Some(Command::Plot(Plot::Nets { history, out })) => {
            let text = std::fs::read_to_string(&history)
                .with_context(|| format!("cannot read {}", history.display()))?;
            let rows = nue::plot::read_nets_history(&text)
                .with_context(|| format!("reading {}", history.display()))?;
            nue::plot::nets_history(&rows, &out)?;
            eprintln!("wrote {}", out.display());
            Ok(())
        }
        Some(Command::Plot(Plot::Tune { state, out })) => {
            let tune = nue::tune::State::load(&state)?;
            let title = format!(
                "{}: {} of {} games",
                state.display(),
                nue::tune::thousands(tune.games()),
                nue::tune::thousands(tune.schedule.planned_games())
            );
            nue::plot::tune_paths(&title, &nue::tune::paths(&tune), &out)?;
            eprintln!("wrote {}", out.display());
            Ok(())
        }
        Some(Command::Tune(command)) => nue::tune::main(&command),
        Some(Command::WdlFit(args)) => nue::train::wdl_fit::run_fit(&args).map(|_| ()),
        Some(Command::Spsa) => {
            write!(std::io::stdout(), "{}", nue::search::params::spsa_input())?;
            if !cfg!(feature = "tune") {
                eprintln!(
                    "note: this build has no parameter options; build the engine to tune \
                     with `cargo build --release --features tune`"
                );
            }
            Ok(())
        }
    }
}
