//! `nue tune`, with a seeded fake match in place of games: a tune stopped and resumed ends
//! in the very file of a tune that was never stopped; the tune finds the optimum of a known
//! objective; damaged, truncated, foreign and future state files are refused with the
//! reason; a changed bench needs a note; and through the binary, a missing fastchess and an
//! engine that is no tuning build are named in the error.

mod common;

use std::{
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    process::Command,
    sync::atomic::AtomicBool,
};

use anyhow::Result;
use common::TempDir;
use nue::{
    search::params,
    tune::{
        self, check_bench, play, spsa::stream, Anomalies, Ended, Limits, Match, Outcome, Plan,
        Played, Schedule, State, Tuned,
    },
};

/// The parameters of the fake tunes, and the optimum of the fake objective for each: five
/// of its `c_end` steps away from the default, in either direction.
const OPTIMUM: &[(&str, f64)] = &[
    ("rfp_margin", 5.0),
    ("lmr_base", -5.0),
    ("history_bonus_max", 5.0),
    ("correction_pieces", -5.0),
];

/// A tune of [`OPTIMUM`]'s parameters from their defaults, not yet played.
fn fresh(iterations: u64, pairs: u64, seed: u64) -> State {
    let schedule = Schedule::new(iterations, pairs);
    let params = OPTIMUM
        .iter()
        .map(|(name, _)| {
            let p = &params::PARAMS[params::find(name).unwrap()];
            let range = (p.min, p.max);
            let gains = (f64::from(p.step), params::SPSA_LEARNING_RATE);
            Tuned::new(p.name, f64::from(p.default), range, gains, &schedule)
        })
        .collect();
    State {
        preset: "custom".into(),
        engine: "/nowhere/nue-tune".into(),
        bench: 2_240_761,
        book: "book.epd".into(),
        book_sha256: "0".repeat(64),
        book_positions: 1000,
        seed,
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
    }
}

/// Games drawn at random from a quadratic objective: a side's strength is
/// `-ELO_PER_STEP² · Σ ((value − optimum) / c_end)²` Elo, the game's expected score
/// follows the logistic Elo curve, draws take up to 40 % of the games, and the results of
/// iteration k depend only on the seed and k (and the values played).
struct Quadratic {
    optimum: Vec<f64>,
    c_end: Vec<f64>,
    seed: u64,
}

/// Elo lost at one `c_end` step from the optimum (four at two steps, and so on).
const ELO_PER_STEP2: f64 = 3.0;

impl Quadratic {
    fn new(state: &State, seed: u64) -> Quadratic {
        Quadratic {
            optimum: state
                .params
                .iter()
                .zip(OPTIMUM)
                .map(|(p, o)| p.start + o.1 * p.c_end)
                .collect(),
            c_end: state.params.iter().map(|p| p.c_end).collect(),
            seed,
        }
    }

    fn strength(&self, values: &[i32]) -> f64 {
        let steps = values.iter().zip(&self.optimum).zip(&self.c_end);
        -ELO_PER_STEP2 * steps.map(|((&v, o), c)| ((f64::from(v) - o) / c).powi(2)).sum::<f64>()
    }
}

impl Match for Quadratic {
    fn play(&mut self, plan: &Plan) -> Result<Outcome> {
        let elo = self.strength(&plan.plus) - self.strength(&plan.minus);
        let score = 1.0 / (1.0 + 10f64.powf(-elo / 400.0));
        let draw = 0.4f64.min(2.0 * score.min(1.0 - score));
        let mut rng = stream(self.seed, plan.k, "fake games");
        let mut played = Played::default();
        for _ in 0..2 * plan.openings.len() {
            let u = rng.unit_f64();
            if u < score - draw / 2.0 {
                played.wins += 1;
            } else if u < score + draw / 2.0 {
                played.draws += 1;
            } else {
                played.losses += 1;
            }
        }
        Ok(Outcome::Played(played))
    }
}

/// A match that stops, as a killed run does, when it reaches iteration `at`.
struct StopAt<'a> {
    inner: &'a mut Quadratic,
    at: u64,
}

impl Match for StopAt<'_> {
    fn play(&mut self, plan: &Plan) -> Result<Outcome> {
        if plan.k == self.at {
            return Ok(Outcome::Stopped);
        }
        self.inner.play(plan)
    }
}

/// Plays `state` on from the file at `path` with `games` within `limits`.
fn run(path: &Path, games: &mut dyn Match, limits: Limits) -> Ended {
    let mut state = State::load(path).unwrap();
    let piece =
        play(path, &mut state, games, limits, &AtomicBool::new(false), &mut |_, _| {}).unwrap();
    piece.ended
}

#[test]
fn a_tune_stopped_and_resumed_ends_byte_for_byte_as_one_never_stopped() {
    let dir = TempDir::new("resume");
    let state = fresh(30, 4, 11);
    let mut games = Quadratic::new(&state, 11);
    let (whole, pieces) = (dir.join("whole.tune"), dir.join("pieces.tune"));
    state.save(&whole).unwrap();
    state.save(&pieces).unwrap();

    assert_eq!(run(&whole, &mut games, Limits::default()), Ended::Finished);

    // Killed during iteration 8: the file holds 7 iterations, and iteration 8 is played
    // again from it. Then a piece limited to 5 iterations, then the rest.
    let stopped = run(&pieces, &mut StopAt { inner: &mut games, at: 8 }, Limits::default());
    assert_eq!(stopped, Ended::Stopped);
    assert_eq!(State::load(&pieces).unwrap().iteration, 7);
    let limits = Limits { iterations: Some(5), ..Limits::default() };
    assert_eq!(run(&pieces, &mut games, limits), Ended::IterationLimit);
    assert_eq!(State::load(&pieces).unwrap().iteration, 12);
    assert_eq!(run(&pieces, &mut games, Limits::default()), Ended::Finished);

    let (a, b) = (std::fs::read(&whole).unwrap(), std::fs::read(&pieces).unwrap());
    assert!(a == b, "the resumed tune's file differs from the unstopped one's");
    let done = State::load(&whole).unwrap();
    assert_eq!((done.iteration, done.games(), done.steps.len()), (30, 240, 30));
    assert_eq!(done.wins + done.losses + done.draws, 240);
    // And a run of a finished tune plays nothing.
    assert_eq!(run(&whole, &mut games, Limits::default()), Ended::Finished);
    assert_eq!(std::fs::read(&whole).unwrap(), a);
}

#[test]
fn the_tune_moves_every_parameter_toward_the_optimum() {
    // 20,000 fake games, as the real tune plays: 1,250 iterations of 8 pairs.
    let mut state = fresh(1250, 8, 5);
    let mut games = Quadratic::new(&state, 5);
    let openings = state.openings();
    while !state.finished() {
        let plan = state.plan(&openings);
        let Outcome::Played(played) = games.play(&plan).unwrap() else { unreachable!() };
        state.record(&plan, &played);
    }
    // Each parameter started five steps from its optimum. A tune that did not move, or
    // wandered at random (its spread here is under a step), is not within two steps of
    // all four optima with the squared distance cut to a tenth.
    let mut before = 0.0;
    let mut after = 0.0;
    for (i, p) in state.params.iter().enumerate() {
        let (start, now) =
            ((p.start - games.optimum[i]) / p.c_end, (p.value - games.optimum[i]) / p.c_end);
        assert!(now.abs() < 2.0, "{} ended {now:+.2} steps from its optimum: {p:?}", p.name);
        assert!(now.abs() < start.abs(), "{}", p.name);
        before += start * start;
        after += now * now;
    }
    assert!(after < before / 10.0, "squared distance {before:.1} -> {after:.1}");
}

/// The text of the error that `State::load` gives for a file holding `bytes`.
fn refusal(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let err = format!("{:#}", State::load(&path).unwrap_err());
    assert!(err.contains(&path.display().to_string()), "the error names the file: {err}");
    err
}

#[test]
fn damaged_truncated_foreign_and_future_files_are_refused_with_the_reason() {
    let dir = TempDir::new("refused");
    let mut state = fresh(10, 2, 3);
    let mut games = Quadratic::new(&state, 3);
    let openings = state.openings();
    for _ in 0..3 {
        let plan = state.plan(&openings);
        let Outcome::Played(played) = games.play(&plan).unwrap() else { unreachable!() };
        state.record(&plan, &played);
    }
    let good = state.to_text().into_bytes();
    assert_eq!(State::parse(&good).unwrap(), state);

    // One digit of a parameter's value changed.
    let at = good.windows(16).position(|w| w.starts_with(b"param lmr_base ")).unwrap() + 15;
    let mut damaged = good.clone();
    damaged[at] = if damaged[at] == b'7' { b'8' } else { b'7' };
    let err = refusal(&dir, "damaged.tune", &damaged);
    assert!(err.contains("damaged") && err.contains("checksum"), "{err}");

    for cut in [good.len() - 1, good.len() - 30, good.len() / 2, 11] {
        let err = refusal(&dir, "truncated.tune", &good[..cut]);
        assert!(err.contains("truncated"), "cut at {cut}: {err}");
    }

    let future =
        String::from_utf8(good.clone()).unwrap().replacen("nue-tune 1\n", "nue-tune 2\n", 1);
    let err = refusal(&dir, "future.tune", future.as_bytes());
    assert!(err.contains("format version 2") && err.contains("version 1"), "{err}");

    for foreign in
        [&b"[Event \"?\"]\n1. e4 e5 *\n"[..], b"", b"\x89PNG\r\n\x1a\n\0\0", b"nue-tune\n"]
    {
        let err = refusal(&dir, "foreign.tune", foreign);
        assert!(err.contains("not a tune state file"), "{err}");
    }
}

#[test]
fn a_changed_bench_is_refused_without_a_note_and_recorded_with_one() {
    let mut state = fresh(10, 2, 3);
    check_bench(&mut state, 2_240_761, None).unwrap();
    assert!(state.notes.is_empty());

    let err = check_bench(&mut state, 2_250_000, None).unwrap_err().to_string();
    assert!(
        err.contains("2,250,000") && err.contains("2,240,761") && err.contains("--note"),
        "{err}"
    );
    assert_eq!(state.bench, 2_240_761);

    check_bench(&mut state, 2_250_000, Some("Search VI: deeper LMR (commit abc1234)")).unwrap();
    assert_eq!(state.bench, 2_250_000);
    assert_eq!(state.notes.len(), 1);
    assert_eq!(state.notes[0].games, 0);
    assert_eq!(
        state.notes[0].text,
        "bench 2,240,761 -> 2,250,000: Search VI: deeper LMR (commit abc1234)"
    );
    // The note survives the file, and the new count is the one compared next time.
    let back = State::parse(state.to_text().as_bytes()).unwrap();
    assert_eq!(back.notes, state.notes);
    check_bench(&mut state, 2_250_000, None).unwrap();
}

#[test]
fn the_paths_picture_is_drawn_from_a_state() {
    let dir = TempDir::new("plot");
    let mut state = fresh(10, 2, 3);
    let mut games = Quadratic::new(&state, 3);
    let openings = state.openings();
    for _ in 0..4 {
        let plan = state.plan(&openings);
        let Outcome::Played(played) = games.play(&plan).unwrap() else { unreachable!() };
        state.record(&plan, &played);
    }
    let paths = tune::paths(&state);
    assert_eq!(paths.len(), 4);
    assert_eq!(paths[0].points.len(), 5);
    assert_eq!(paths[0].points[4].0, 16.0);
    let out = dir.join("tune.svg");
    nue::plot::tune_paths("test", &paths, &out).unwrap();
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("rfp_margin"));
}

/// Runs the `nue` binary with `args` and `PATH` set to `path`, and returns whether it
/// succeeded and its standard error.
fn nue(args: &[&str], path: &str) -> (bool, String) {
    let out =
        Command::new(env!("CARGO_BIN_EXE_nue")).args(args).env("PATH", path).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A stand-in for a tuning build: a shell script that lists two parameter options after
/// `uci` and answers `bench` with the count in `bench.txt` beside it.
fn fake_engine(dir: &Path, bench: u64) -> PathBuf {
    let engine = dir.join("fake-engine");
    std::fs::write(
        &engine,
        "#!/bin/sh\n\
         if [ \"$1\" = bench ]; then\n\
           echo \"$(cat \"$(dirname \"$0\")/bench.txt\") nodes 1000 nps\"; exit 0\n\
         fi\n\
         while read -r line; do\n\
           case \"$line\" in\n\
             uci) echo 'id name Fake 0.1 (abcdef1)'\n\
                  echo 'option name rfp_margin type spin default 180 min 80 max 300'\n\
                  echo 'option name lmr_base type spin default 80 min 0 max 150'\n\
                  echo uciok ;;\n\
             quit) exit 0 ;;\n\
           esac\n\
         done\n",
    )
    .unwrap();
    std::fs::set_permissions(&engine, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(dir.join("bench.txt"), bench.to_string()).unwrap();
    engine
}

#[test]
fn the_binary_creates_shows_and_refuses_with_reasons() {
    let dir = TempDir::new("binary");
    let engine = fake_engine(&dir, 1234);
    let book = dir.join("book.epd");
    std::fs::write(&book, "8/8/8/4k3/8/8/4P3/4K3 w - - 0 1\n8/8/8/4k3/8/8/3P4/4K3 w - - 0 1\n")
        .unwrap();
    let state = dir.join("tune/t.tune");
    let (state_s, engine_s, book_s) =
        (state.to_str().unwrap(), engine.to_str().unwrap(), book.to_str().unwrap());
    // The system's tools, for the fake engine's shell (fastchess is given or missing).
    let path = "/usr/bin:/bin";
    let new = ["tune", "new", state_s, "--engine", engine_s, "--params", "rfp_margin,lmr_base"];
    let new: Vec<&str> =
        new.into_iter().chain(["--games", "32", "--pairs", "2", "--book", book_s]).collect();
    let (ok, err) = nue(&new, path);
    assert!(ok, "{err}");
    assert!(err.contains("8 iterations of 2 pairs (32 games)"), "{err}");
    let tune = State::load(&state).unwrap();
    assert_eq!((tune.bench, tune.book_positions, tune.params.len()), (1234, 2, 2));
    assert_eq!(tune.params[0].c_end, 12.0);

    let (ok, err) = nue(&new, path);
    assert!(!ok && err.contains("exists"), "{err}");

    let (ok, err) = nue(&["tune", "run", state_s, "--fastchess", "/no/such/fastchess"], path);
    assert!(
        !ok && err.contains("fastchess not found") && err.contains("/no/such/fastchess"),
        "{err}"
    );
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (ok, err) = nue(&["tune", "run", state_s], empty.to_str().unwrap());
    assert!(!ok && err.contains("fastchess not found") && err.contains("on PATH"), "{err}");

    std::fs::write(dir.join("bench.txt"), "1300").unwrap();
    let (ok, err) = nue(&["tune", "run", state_s, "--iterations", "0"], path);
    assert!(!ok && err.contains("the search has changed"), "{err}");
    let note = ["tune", "run", state_s, "--iterations", "0", "--note", "the search changed"];
    let (ok, err) = nue(&note, path);
    assert!(ok, "{err}");
    let tune = State::load(&state).unwrap();
    assert_eq!(tune.bench, 1300);
    assert_eq!(tune.notes[0].text, "bench 1,234 -> 1,300: the search changed");

    let out =
        Command::new(env!("CARGO_BIN_EXE_nue")).args(["tune", "show", state_s]).output().unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("setoption name rfp_margin value 180"), "{shown}");
    assert!(shown.contains("    lmr_base = 80, 0..=150, step 8;"), "{shown}");

    let svg = dir.join("t.svg");
    let (ok, err) = nue(&["plot", "tune", state_s, svg.to_str().unwrap()], path);
    assert!(ok && svg.exists(), "{err}");

    // This test binary's own `nue` has no parameter options unless built with the feature.
    if !cfg!(feature = "tune") {
        let plain = env!("CARGO_BIN_EXE_nue");
        let other = dir.join("other.tune");
        let args = ["tune", "new", other.to_str().unwrap(), "--engine", plain, "--book", book_s];
        let (ok, err) = nue(&args, path);
        assert!(!ok && err.contains("not a tuning build"), "{err}");
        assert!(!other.exists());
    }
}
