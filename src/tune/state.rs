//! A tune's whole state in one text file: what it tunes, with which engine, book and
//! schedule, where every parameter stands, the games so far and the path that led there.
//!
//! The file is written after every iteration, to a temporary file beside it that is then
//! renamed over it, so that a process killed at any moment leaves either the old file or
//! the new one. It is meant to be read by people (one `key value` line each, the
//! parameters and the iterations one line apiece) and guarded against everything else: its
//! first line names the format and its version, its last line is the SHA-256 of all the
//! lines before it, and a file that fails either check, or whose lines do not add up, is
//! refused with the reason, never half read. Numbers are written so that reading them back
//! gives the same bits (Rust prints the shortest decimal that does), which makes a resumed
//! tune byte for byte the tune that was never stopped.
//!
//! ```text
//! nue-tune 1
//! # An SPSA tune of Nue's search parameters, written by `nue tune` (docs/tuning.md).
//! preset deep
//! engine /work/tune-bin/nue-tune
//! bench 2240761
//! ...
//! param rfp_margin 181.64 180 80 300 12 0.002 24.25 91.23
//! step 1 16 5 4 7 181.64 ...
//! checksum sha256 5d41402abc4b2a76b9719d911017c592...
//! ```

use std::{
    fmt::Write as _,
    fs::File,
    io::Write as _,
    path::{Path, PathBuf},
};

use anyhow::{bail, ensure, Context, Result};
use sha2::{Digest, Sha256};

use super::spsa::{self, Openings, Plan, Schedule, Tuned};

/// The first word of every state file.
pub const MAGIC: &str = "nue-tune";
/// The version of the layout this code reads and writes.
pub const FORMAT_VERSION: u32 = 1;
/// The prefix of the last line, before the hex digest of everything above it.
const CHECKSUM_PREFIX: &str = "checksum sha256 ";
/// Most iterations a state may plan (a million-game tune has 62,500 of 8 pairs).
const MAX_ITERATIONS: u64 = 1_000_000_000;
/// Most game pairs an iteration may have.
const MAX_PAIRS: u64 = 1_000_000;

/// Games that ended abnormally, counted as fastchess words their endings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Anomalies {
    /// "disconnects": the engine's process ended or stopped reading (fastchess's summary
    /// counts these as "Crashed").
    pub crashes: u64,
    /// "connection stalls": the engine stopped answering.
    pub stalls: u64,
    /// "makes an illegal move".
    pub illegal_moves: u64,
    /// "loses on time" (none are expected at a node limit).
    pub time_losses: u64,
}

impl Anomalies {
    /// All of them.
    pub fn total(&self) -> u64 {
        self.crashes + self.stalls + self.illegal_moves + self.time_losses
    }

    /// These and `other`.
    pub fn add(&mut self, other: &Anomalies) {
        self.crashes += other.crashes;
        self.stalls += other.stalls;
        self.illegal_moves += other.illegal_moves;
        self.time_losses += other.time_losses;
    }
}

/// The result of one iteration's games, from θ+'s side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Played {
    /// Games θ+ won.
    pub wins: u64,
    /// Games θ+ lost.
    pub losses: u64,
    /// Drawn games.
    pub draws: u64,
    /// The abnormal endings among them.
    pub anomalies: Anomalies,
}

impl Played {
    /// Games played.
    pub fn games(&self) -> u64 {
        self.wins + self.losses + self.draws
    }
}

/// A line of the tune's history that is not a game: a change of the engine, of machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// Games played when it was written.
    pub games: u64,
    /// What happened, one line.
    pub text: String,
}

/// One finished iteration.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Its number, from 1.
    pub k: u64,
    /// Its games θ+ won.
    pub wins: u64,
    /// Its games θ+ lost.
    pub losses: u64,
    /// Its drawn games.
    pub draws: u64,
    /// Every parameter's value after it, in the order of [`State::params`].
    pub values: Vec<f64>,
}

/// Everything a tune is.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// The name of the parameter preset, or `custom`.
    pub preset: String,
    /// The tuning build that plays both sides.
    pub engine: PathBuf,
    /// That engine's `bench` node count; a different count means a different search.
    pub bench: u64,
    /// The opening book (EPD), as given.
    pub book: PathBuf,
    /// The book's SHA-256, so that a resumed tune plays the same openings.
    pub book_sha256: String,
    /// Positions in the book (its non-empty lines).
    pub book_positions: usize,
    /// The seed of the perturbations and of the order of the openings.
    pub seed: u64,
    /// Nodes a move, each side.
    pub nodes: u64,
    /// Each engine's hash table, MiB.
    pub hash_mib: u32,
    /// Iterations, pairs and gains.
    pub schedule: Schedule,
    /// Iterations finished.
    pub iteration: u64,
    /// Games θ+ won, all iterations.
    pub wins: u64,
    /// Games θ+ lost.
    pub losses: u64,
    /// Drawn games.
    pub draws: u64,
    /// Abnormal endings, all iterations.
    pub anomalies: Anomalies,
    /// The parameters, in the engine's table order.
    pub params: Vec<Tuned>,
    /// Notes, oldest first.
    pub notes: Vec<Note>,
    /// Every finished iteration, in order.
    pub steps: Vec<Step>,
}

impl State {
    /// Games played so far.
    pub fn games(&self) -> u64 {
        self.iteration * self.schedule.games_per_iteration()
    }

    /// Whether every planned iteration has been played.
    pub fn finished(&self) -> bool {
        self.iteration >= self.schedule.iterations
    }

    /// The order of this tune's openings.
    pub fn openings(&self) -> Openings {
        Openings::new(self.seed, self.book_positions)
    }

    /// The next iteration's plan.
    pub fn plan(&self, openings: &Openings) -> Plan {
        Plan::new(&self.params, &self.schedule, self.seed, self.iteration + 1, openings)
    }

    /// Takes in the games of `plan`, the next iteration.
    pub fn record(&mut self, plan: &Plan, played: &Played) {
        assert_eq!(plan.k, self.iteration + 1, "iterations are recorded in order");
        spsa::update(&mut self.params, plan, played.wins, played.losses);
        self.iteration = plan.k;
        self.wins += played.wins;
        self.losses += played.losses;
        self.draws += played.draws;
        self.anomalies.add(&played.anomalies);
        self.steps.push(Step {
            k: plan.k,
            wins: played.wins,
            losses: played.losses,
            draws: played.draws,
            // Kept as the file keeps them, so that a state read back equals this one.
            values: self
                .params
                .iter()
                .map(|p| round_for_path(p.value).parse().unwrap_or(p.value))
                .collect(),
        });
    }

    /// Adds a note at the current game count; a note is one line.
    pub fn note(&mut self, text: &str) {
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        self.notes.push(Note { games: self.games(), text });
    }

    /// The file's text, checksum line included.
    pub fn to_text(&self) -> String {
        let mut t = String::new();
        let s = &self.schedule;
        let mut line = |text: String| {
            t.push_str(&text);
            t.push('\n');
        };
        line(format!("{MAGIC} {FORMAT_VERSION}"));
        line(
            "# An SPSA tune of Nue's search parameters, written by `nue tune` (docs/tuning.md)."
                .into(),
        );
        line(
            "# The last line is a checksum of the others: change the file only through `nue tune`."
                .into(),
        );
        line(format!("preset {}", self.preset));
        line(format!("engine {}", self.engine.display()));
        line(format!("bench {}", self.bench));
        line(format!("book {}", self.book.display()));
        line(format!("book-sha256 {}", self.book_sha256));
        line(format!("book-positions {}", self.book_positions));
        line(format!("seed {}", self.seed));
        line(format!("nodes {}", self.nodes));
        line(format!("hash {}", self.hash_mib));
        line(format!("pairs {}", s.pairs));
        line(format!("iterations {}", s.iterations));
        line(format!("alpha {}", s.alpha));
        line(format!("gamma {}", s.gamma));
        line(format!("A {}", s.big_a));
        line(format!("iteration {}", self.iteration));
        line(format!("games {} of {}", self.games(), s.planned_games()));
        line(format!("wins {}", self.wins));
        line(format!("losses {}", self.losses));
        line(format!("draws {}", self.draws));
        line(format!("crashes {}", self.anomalies.crashes));
        line(format!("stalls {}", self.anomalies.stalls));
        line(format!("illegal-moves {}", self.anomalies.illegal_moves));
        line(format!("time-losses {}", self.anomalies.time_losses));
        line("# param: name, value, start, min, max, c_end, r_end, c, a".into());
        for p in &self.params {
            line(format!(
                "param {} {} {} {} {} {} {} {} {}",
                p.name, p.value, p.start, p.min, p.max, p.c_end, p.r_end, p.c, p.a
            ));
        }
        line("# note: games played when it was written, then the note".into());
        for n in &self.notes {
            line(format!("note {} {}", n.games, n.text));
        }
        line(
            "# step: iteration, games after it, its wins, losses and draws (θ+'s side), then"
                .into(),
        );
        line("# each parameter's value after it, in the order of the param lines".into());
        for step in &self.steps {
            let mut text = format!(
                "step {} {} {} {} {}",
                step.k,
                step.k * s.games_per_iteration(),
                step.wins,
                step.losses,
                step.draws
            );
            for v in &step.values {
                let _ = write!(text, " {}", round_for_path(*v));
            }
            line(text);
        }
        let digest = hex(&Sha256::digest(t.as_bytes()));
        t.push_str(CHECKSUM_PREFIX);
        t.push_str(&digest);
        t.push('\n');
        t
    }

    /// Reads a state from the bytes of its file, or says what is wrong with them.
    pub fn parse(bytes: &[u8]) -> Result<State> {
        let first_line = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
        let version = first_line
            .strip_prefix(MAGIC.as_bytes())
            .and_then(|rest| rest.strip_prefix(b" "))
            .and_then(|v| std::str::from_utf8(v).ok())
            .and_then(|v| v.parse::<u32>().ok());
        let Some(version) = version else {
            bail!("not a tune state file: it does not begin with `{MAGIC} <version>`");
        };
        ensure!(
            version == FORMAT_VERSION,
            "format version {version}: this nue reads tune states of version {FORMAT_VERSION} only"
        );
        let body_end = match bytes.strip_suffix(b"\n") {
            Some(without) => without.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1),
            None => bail!("truncated: the file does not end with its checksum line"),
        };
        let (body, last) = bytes.split_at(body_end);
        let last = last.strip_suffix(b"\n").unwrap_or(last);
        let Some(digest) = last.strip_prefix(CHECKSUM_PREFIX.as_bytes()) else {
            bail!("truncated: the file does not end with its checksum line");
        };
        ensure!(
            digest.len() == 64 && digest.iter().all(|b| b.is_ascii_hexdigit()),
            "damaged: its checksum line is not `{CHECKSUM_PREFIX}` and 64 hex digits"
        );
        ensure!(
            digest == hex(&Sha256::digest(body)).as_bytes(),
            "damaged: its contents do not match its checksum (the file changed after nue \
             wrote it)"
        );
        let text = std::str::from_utf8(body).context("damaged: not UTF-8 text")?;
        parse_body(text)
    }

    /// Reads the state file at `path`.
    pub fn load(path: &Path) -> Result<State> {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        State::parse(&bytes).with_context(|| format!("{} is refused", path.display()))
    }

    /// Writes the state to `path` atomically: a temporary file beside it, flushed to the
    /// disk, renamed over it.
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut temporary = path.as_os_str().to_owned();
        temporary.push(".tmp");
        let temporary = PathBuf::from(temporary);
        let write = || -> std::io::Result<()> {
            let mut file = File::create(&temporary)?;
            file.write_all(self.to_text().as_bytes())?;
            file.sync_all()?;
            std::fs::rename(&temporary, path)?;
            // The rename itself reaches the disk when the folder is synced.
            let folder = path.parent().filter(|p| !p.as_os_str().is_empty());
            File::open(folder.unwrap_or(Path::new(".")))?.sync_all()
        };
        write().with_context(|| format!("cannot write {}", path.display()))
    }
}

/// A path value as the file keeps it: to a thousandth, enough for a picture, and stable
/// when read and written again.
fn round_for_path(v: f64) -> String {
    format!("{v:.3}")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The lines between the version line and the checksum line.
fn parse_body(text: &str) -> Result<State> {
    let mut fields: Vec<(&str, &str, usize)> = Vec::new();
    let mut params = Vec::new();
    let mut notes = Vec::new();
    let mut steps = Vec::new();
    for (number, line) in text.lines().enumerate().skip(1).map(|(i, l)| (i + 1, l)) {
        if line.starts_with('#') {
            continue;
        }
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        let at = || format!("line {number}");
        match key {
            "param" => params.push(parse_param(rest).with_context(at)?),
            "note" => {
                let (games, text) = rest.split_once(' ').unwrap_or((rest, ""));
                notes.push(Note { games: number_of(games).with_context(at)?, text: text.into() });
            }
            "step" => steps.push(words(rest).with_context(at)?),
            _ => {
                ensure!(KEYS.contains(&key), "line {number}: unknown field `{key}`");
                ensure!(
                    !fields.iter().any(|(k, _, _)| *k == key),
                    "line {number}: a second `{key}` line"
                );
                fields.push((key, rest, number));
            }
        }
    }
    let field = |key: &str| -> Result<(&str, usize)> {
        fields
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|&(_, v, n)| (v, n))
            .with_context(|| format!("no `{key}` line"))
    };
    let num = |key: &str| -> Result<u64> {
        let (v, n) = field(key)?;
        number_of(v).with_context(|| format!("line {n}"))
    };
    let float = |key: &str| -> Result<f64> {
        let (v, n) = field(key)?;
        float_of(v).with_context(|| format!("line {n}"))
    };
    let schedule = Schedule {
        iterations: num("iterations")?,
        pairs: num("pairs")?,
        alpha: float("alpha")?,
        gamma: float("gamma")?,
        big_a: float("A")?,
    };
    ensure!(
        (1..=MAX_ITERATIONS).contains(&schedule.iterations)
            && (1..=MAX_PAIRS).contains(&schedule.pairs),
        "{} iterations of {} pairs: at least one of each, at most {MAX_ITERATIONS} and \
         {MAX_PAIRS}",
        schedule.iterations,
        schedule.pairs
    );
    let state = State {
        preset: field("preset")?.0.to_string(),
        engine: PathBuf::from(field("engine")?.0),
        bench: num("bench")?,
        book: PathBuf::from(field("book")?.0),
        book_sha256: field("book-sha256")?.0.to_string(),
        book_positions: num("book-positions")? as usize,
        seed: num("seed")?,
        nodes: num("nodes")?,
        hash_mib: u32::try_from(num("hash")?).context("hash too large")?,
        schedule,
        iteration: num("iteration")?,
        wins: num("wins")?,
        losses: num("losses")?,
        draws: num("draws")?,
        anomalies: Anomalies {
            crashes: num("crashes")?,
            stalls: num("stalls")?,
            illegal_moves: num("illegal-moves")?,
            time_losses: num("time-losses")?,
        },
        params,
        notes,
        steps: Vec::new(),
    };
    // Before any count is multiplied: a file written by a faulty program is refused, not
    // followed into an overflow.
    ensure!(
        state.iteration <= state.schedule.iterations,
        "iteration {} of {} planned",
        state.iteration,
        state.schedule.iterations
    );
    ensure!(
        state.book_positions <= u32::MAX as usize,
        "a book of {} positions",
        state.book_positions
    );
    let games = field("games")?;
    ensure!(
        games.0 == format!("{} of {}", state.games(), state.schedule.planned_games()),
        "line {}: `games {}` does not match {} iterations of {} pairs",
        games.1,
        games.0,
        state.iteration,
        state.schedule.pairs
    );
    check(state, &steps)
}

/// The consistency of a parsed state: what the checksum cannot catch (a file written by
/// a faulty program) is still caught before a tune goes on from it.
fn check(mut state: State, steps: &[Vec<&str>]) -> Result<State> {
    ensure!(!state.params.is_empty(), "no `param` lines");
    ensure!(state.book_positions > 0, "a book of no positions");
    for p in &state.params {
        ensure!(
            p.min <= p.max && (f64::from(p.min)..=f64::from(p.max)).contains(&p.value),
            "{} = {} lies outside its range {}..{}",
            p.name,
            p.value,
            p.min,
            p.max
        );
    }
    let sum3 = |a: u64, b: u64, c: u64| u128::from(a) + u128::from(b) + u128::from(c);
    ensure!(
        sum3(state.wins, state.losses, state.draws) == u128::from(state.games()),
        "wins, losses and draws ({}, {}, {}) do not add up to the {} games",
        state.wins,
        state.losses,
        state.draws,
        state.games()
    );
    ensure!(
        steps.len() as u64 == state.iteration,
        "{} step lines for {} iterations",
        steps.len(),
        state.iteration
    );
    let per_iteration = state.schedule.games_per_iteration();
    for (i, words) in steps.iter().enumerate() {
        let k = i as u64 + 1;
        ensure!(
            words.len() == 5 + state.params.len(),
            "step {k}: {} fields, expected {}",
            words.len(),
            5 + state.params.len()
        );
        let n = |i: usize| number_of(words[i]).with_context(|| format!("step {k}"));
        ensure!(n(0)? == k, "step {k} is numbered {}", words[0]);
        ensure!(n(1)? == k * per_iteration, "step {k}: {} games after it", words[1]);
        let (wins, losses, draws) = (n(2)?, n(3)?, n(4)?);
        ensure!(
            sum3(wins, losses, draws) == u128::from(per_iteration),
            "step {k}: its games do not add up"
        );
        let values = words[5..]
            .iter()
            .map(|w| float_of(w).with_context(|| format!("step {k}")))
            .collect::<Result<Vec<f64>>>()?;
        state.steps.push(Step { k, wins, losses, draws, values });
    }
    // Each step's counts are at most its games, so these sums cannot overflow.
    let sum = |f: fn(&Step) -> u64| state.steps.iter().map(f).sum::<u64>();
    ensure!(
        (sum(|s| s.wins), sum(|s| s.losses), sum(|s| s.draws))
            == (state.wins, state.losses, state.draws),
        "the steps' results do not add up to the totals"
    );
    Ok(state)
}

/// The single-valued fields, in the order they are written.
const KEYS: &[&str] = &[
    "preset",
    "engine",
    "bench",
    "book",
    "book-sha256",
    "book-positions",
    "seed",
    "nodes",
    "hash",
    "pairs",
    "iterations",
    "alpha",
    "gamma",
    "A",
    "iteration",
    "games",
    "wins",
    "losses",
    "draws",
    "crashes",
    "stalls",
    "illegal-moves",
    "time-losses",
];

fn number_of(text: &str) -> Result<u64> {
    text.parse().with_context(|| format!("{text:?} is not a whole number"))
}

fn float_of(text: &str) -> Result<f64> {
    let v: f64 = text.parse().with_context(|| format!("{text:?} is not a number"))?;
    ensure!(v.is_finite(), "{text:?} is not a finite number");
    Ok(v)
}

fn words(text: &str) -> Result<Vec<&str>> {
    let words: Vec<&str> = text.split(' ').collect();
    ensure!(words.iter().all(|w| !w.is_empty()), "fields must be separated by one space");
    Ok(words)
}

fn parse_param(text: &str) -> Result<Tuned> {
    let w = words(text)?;
    ensure!(w.len() == 9, "a param line has 9 fields, this one {}", w.len());
    let int = |i: usize| -> Result<i32> {
        w[i].parse().with_context(|| format!("{:?} is not an integer", w[i]))
    };
    Ok(Tuned {
        name: w[0].to_string(),
        value: float_of(w[1])?,
        start: float_of(w[2])?,
        min: int(3)?,
        max: int(4)?,
        c_end: float_of(w[5])?,
        r_end: float_of(w[6])?,
        c: float_of(w[7])?,
        a: float_of(w[8])?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small state after `iterations` iterations with made-up results.
    fn sample(iterations: u64) -> State {
        let schedule = Schedule::new(10, 2);
        let params = vec![
            Tuned::new("rfp_margin", 180.0, (80, 300), (12.0, 0.002), &schedule),
            Tuned::new("lmr_base", 80.0, (0, 150), (8.0, 0.002), &schedule),
        ];
        let mut state = State {
            preset: "custom".into(),
            engine: "/tmp/nue tune".into(),
            bench: 2_240_761,
            book: "../shared/books/UHO_4060_v4.epd".into(),
            book_sha256: "ab".repeat(32),
            book_positions: 100,
            seed: 3,
            nodes: 25_000,
            hash_mib: 16,
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
        let openings = state.openings();
        for k in 0..iterations {
            let plan = state.plan(&openings);
            let played = Played { wins: k % 3, losses: 1, draws: 3 - k % 3, ..Played::default() };
            state.record(&plan, &played);
        }
        state.note("moved to another machine");
        state
    }

    #[test]
    fn a_state_round_trips_through_its_text() {
        let state = sample(4);
        let text = state.to_text();
        let back = State::parse(text.as_bytes()).unwrap();
        assert_eq!(back.to_text(), text);
        assert_eq!(back.params, state.params);
        assert_eq!(back.notes[0], Note { games: 16, text: "moved to another machine".into() });
        assert!(text.starts_with("nue-tune 1\n"));
        assert!(text.contains("\ngames 16 of 40\n"));
    }

    #[test]
    fn every_changed_byte_is_refused_without_a_panic() {
        let text = sample(2).to_text().into_bytes();
        for i in 0..text.len() {
            let mut damaged = text.clone();
            damaged[i] ^= 0x04;
            let err = format!("{:#}", State::parse(&damaged).unwrap_err());
            assert!(
                ["damaged", "truncated", "not a tune state", "format version"]
                    .iter()
                    .any(|w| err.contains(w)),
                "byte {i}: {err}"
            );
        }
    }

    #[test]
    fn inconsistent_lines_under_a_valid_checksum_are_refused() {
        // As a faulty writer would make them: the checksum recomputed over wrong lines.
        let rewrite = |from: &str, to: &str| {
            let text = sample(3).to_text();
            let body = &text[..text.rfind(CHECKSUM_PREFIX).unwrap()];
            let body = body.replacen(from, to, 1);
            let digest = hex(&Sha256::digest(body.as_bytes()));
            format!(
                "{:#}",
                State::parse(format!("{body}{CHECKSUM_PREFIX}{digest}\n").as_bytes()).unwrap_err()
            )
        };
        assert!(rewrite("\nwins ", "\nwins 1").contains("do not add up"));
        assert!(rewrite("\nseed 3\n", "\n").contains("no `seed` line"));
        assert!(rewrite("\nseed 3\n", "\nseed 3\nseed 4\n").contains("a second `seed` line"));
        assert!(rewrite("\nstep 3 ", "\nstep 4 ").contains("numbered"));
        assert!(rewrite("\nnodes ", "\nnodez ").contains("unknown field `nodez`"));
        // Numbers that would overflow the game counts are refused, not multiplied.
        assert!(rewrite("\niteration 3\n", "\niteration 18446744073709551615\n")
            .contains("iteration 18446744073709551615 of 10"));
        assert!(rewrite("\nwins ", "\nwins 1844674407370955161").contains("do not add up"));
        assert!(rewrite("\npairs 2\n", "\npairs 0\n").contains("at least one"));
    }
}
