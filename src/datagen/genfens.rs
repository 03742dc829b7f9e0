//! `genfens`: opening positions for data generation, as OpenBench's datagen workloads ask
//! for them. Its client runs `./engine "genfens N seed S book <path|None> <extra>" "quit"`
//! and reads the lines `info string genfens <FEN>`; this answers with N distinct legal
//! positions, the same ones for the same arguments.
//!
//! They are chosen as `nue datagen` chooses its openings: opening i of seed S is game i's
//! of `nue datagen --seed S` (a book position or the start position, then random plies,
//! kept once a short search of Nue's scores it within the bound), so the two agree, and
//! repeats are skipped. The extra words, all optional: `plies=N` random plies (default 8,
//! or 0 with a book; one more every other opening), `bound=CP` the score bound (default
//! 400) and `nodes=N` the search's soft node limit (default 5000).

use std::{collections::HashSet, io, path::PathBuf};

use anyhow::{bail, ensure, Context, Result};
use shakmaty::{fen::Fen, EnPassantMode};

use super::{
    game::{choose_opening, game_rng, Openings},
    player::{NuePlayer, DEFAULT_NODES},
    random_plies, DEFAULT_OPENING_BOUND,
};
use crate::{board::key_of, book};

/// What `genfens` was asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenfensArgs {
    /// Positions to print.
    pub count: usize,
    /// Seed of the openings.
    pub seed: u64,
    /// An EPD or PGN book to start from, instead of the start position.
    pub book: Option<PathBuf>,
    /// Random plies after the book position or the start position.
    pub random_plies: usize,
    /// Largest score of a kept opening, centipawns either way.
    pub bound: i32,
    /// Soft node limit of the search that scores an opening.
    pub nodes: u64,
}

const USAGE: &str = "usage: genfens N seed S book <path|None> [plies=N] [bound=CP] [nodes=N]";

/// Openings tried, per position asked for, before `genfens` gives up on finding them all
/// distinct (a small book with no random plies has only so many).
const TRIES_PER_POSITION: usize = 20;

impl GenfensArgs {
    /// Reads the words after `genfens`: `N seed S book <path|None>` and the extra words.
    pub fn parse(words: &[String]) -> Result<GenfensArgs> {
        let number = |what: &str, word: Option<&String>| -> Result<u64> {
            let word = word.with_context(|| format!("{what} is missing ({USAGE})"))?;
            word.parse().with_context(|| format!("{what} must be a number, not '{word}'"))
        };
        let count = number("N", words.first())?;
        let mut args = GenfensArgs {
            count: usize::try_from(count).context("N is too large")?,
            seed: 0,
            book: None,
            random_plies: 0,
            bound: DEFAULT_OPENING_BOUND,
            nodes: DEFAULT_NODES,
        };
        let mut rest = words[1..].iter();
        let mut seen_seed = false;
        let mut plies = None;
        while let Some(word) = rest.next() {
            match word.as_str() {
                "seed" => {
                    args.seed = number("the seed", rest.next())?;
                    seen_seed = true;
                }
                "book" => {
                    let path =
                        rest.next().with_context(|| format!("book needs a path ({USAGE})"))?;
                    args.book = (!path.eq_ignore_ascii_case("none")).then(|| PathBuf::from(path));
                }
                extra => {
                    let (key, value) = extra
                        .split_once('=')
                        .with_context(|| format!("'{extra}' is not a genfens option ({USAGE})"))?;
                    let value: i64 = value
                        .parse()
                        .with_context(|| format!("{key} must be a number, not '{value}'"))?;
                    match key {
                        "plies" => plies = Some(usize::try_from(value).context("plies < 0")?),
                        "bound" => args.bound = i32::try_from(value).context("bound too large")?,
                        "nodes" => args.nodes = u64::try_from(value).context("nodes < 0")?,
                        _ => bail!("'{key}' is not a genfens option ({USAGE})"),
                    }
                }
            }
        }
        ensure!(seen_seed, "the seed is missing ({USAGE})");
        ensure!(args.nodes > 0, "nodes must be at least 1");
        args.random_plies = random_plies(plies, args.book.is_some());
        Ok(args)
    }
}

/// Finds the positions and hands each to `emit` as a FEN, in order; stops at the first
/// error `emit` returns (the reader went away).
pub fn run(args: &GenfensArgs, emit: &mut dyn FnMut(&str) -> io::Result<()>) -> Result<()> {
    let openings = match &args.book {
        Some(path) => Openings::Book(book::load(path)?),
        None => Openings::Start,
    };
    let mut player = NuePlayer::new(16, args.nodes, None)?;
    let mut seen = HashSet::new();
    let max_tries = args.count.saturating_mul(TRIES_PER_POSITION).max(100);
    let mut index = 0;
    while seen.len() < args.count {
        ensure!(
            index < max_tries as u64,
            "only {} distinct openings in {index} tries: the book is too small for {} \
             (add random plies with plies=N)",
            seen.len(),
            args.count
        );
        let mut rng = game_rng(args.seed, index);
        index += 1;
        let opening = choose_opening(
            &mut player,
            &openings,
            args.random_plies,
            args.bound,
            &mut rng,
            &|| false,
        )?
        .expect("never abandoned");
        // Distinct as positions (the key leaves the move counters out).
        if seen.insert(key_of(&opening.start)) {
            emit(&Fen::from_position(&opening.start, EnPassantMode::Legal).to_string())?;
        }
    }
    Ok(())
}
