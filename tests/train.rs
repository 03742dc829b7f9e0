//! The trainer end to end on a slice of the shared data: bad input is reported, a seed
//! reproduces a run, a resumed run equals an uninterrupted one, the exported net loads
//! and agrees with the float model.

mod common;

use std::{
    io::{BufRead, BufReader, Write},
    path::{Path, PathBuf},
};

use common::TempDir;
use flate2::{read::MultiGzDecoder, write::GzEncoder, Compression};
use nue::{
    nnue::Network,
    train::{self, data, TrainArgs},
};

/// The first `n` lines of a shared data file, gzipped into `dir`, with a few broken lines
/// mixed in; `None` (the test is skipped) when the file is missing.
fn sample_data(dir: &Path, n: usize) -> Option<PathBuf> {
    let source = common::shared("data/sf15-d7-part2.txt.gz")?;
    let lines = BufReader::new(MultiGzDecoder::new(std::fs::File::open(source).unwrap())).lines();
    let path = dir.join("sample.txt.gz");
    let mut out = GzEncoder::new(std::fs::File::create(&path).unwrap(), Compression::fast());
    for (i, line) in lines.take(n).enumerate() {
        writeln!(out, "{}", line.unwrap()).unwrap();
        if i == 10 {
            writeln!(out, "this is not a position").unwrap();
            writeln!(out, "8/8/8/8/8/8/8/8 w - - 0 1 | 12 | 0.5").unwrap();
            writeln!(
                out,
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | twelve | 0.5"
            )
            .unwrap();
        }
    }
    out.finish().unwrap();
    Some(path)
}

fn args(data: PathBuf, out: &Path, epochs: usize) -> TrainArgs {
    TrainArgs {
        data: vec![data],
        filter: data::Filter::default(),
        out: out.join("run"),
        cache: out.join("cache"),
        epochs,
        batch_size: 1024,
        lr: 2e-3,
        final_lr: 0.1,
        lambda: 0.75,
        validation_lambda: None,
        scale: None,
        validation: 2000,
        validation_data: Vec::new(),
        validate_only: false,
        loss_power: None,
        seed: 11,
        resume: false,
        stop_after: None,
        init: None,
        no_mirror: false,
        threads: None,
    }
}

#[test]
fn malformed_lines_are_counted_and_skipped() {
    let dir = TempDir::new("malformed");
    let Some(data) = sample_data(&dir, 100) else { return };
    let (positions, stats) = data::read_text(&data).unwrap();
    assert_eq!(positions.len(), 100);
    assert_eq!(stats.kept, 100);
    assert_eq!(stats.bad_syntax, 2);
    assert_eq!(stats.bad_position, 1);
}

#[test]
fn missing_or_empty_input_is_a_clear_error() {
    let dir = TempDir::new("missing");
    let err = train::run(&args(dir.join("nope.txt.gz"), &dir, 1)).unwrap_err();
    assert!(format!("{err:#}").contains("nope.txt.gz"), "{err:#}");
    // A refused run leaves no folders behind.
    assert!(!dir.join("run").exists() && !dir.join("cache").exists());

    let empty = dir.join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let err = train::run(&args(empty, &dir, 1)).unwrap_err();
    assert!(format!("{err:#}").contains("no usable positions"), "{err:#}");
    assert!(!dir.join("run").exists());
}

#[test]
fn training_learns_reproduces_resumes_and_exports_a_loadable_net() {
    let dir = TempDir::new("train");
    let Some(data) = sample_data(&dir, 30_000) else { return };

    let first = train::run(&args(data.clone(), &dir.join("a"), 3)).unwrap();
    let bytes = std::fs::read(&first.net).unwrap();

    // The file is a valid Stockfish 12 net named by its hash, and it loads back unchanged.
    let net = Network::from_bytes(&bytes).unwrap();
    assert_eq!(net.to_bytes(), bytes);
    assert_eq!(first.net.file_name().unwrap().to_string_lossy(), train::net_name(&bytes));

    // It learned something: the loss fell below that of predicting 50% everywhere.
    let log = std::fs::read_to_string(dir.join("a/run/log.tsv")).unwrap();
    let losses: Vec<f64> =
        log.lines().skip(1).map(|l| l.split('\t').nth(2).unwrap().parse().unwrap()).collect();
    assert_eq!(losses.len(), 3);
    assert!(losses[2] < losses[0], "validation loss did not fall: {losses:?}");
    // Its curves are drawn beside the log, three validation points among them.
    let curves = std::fs::read_to_string(dir.join("a/run/curves.svg")).unwrap();
    assert!(curves.starts_with("<svg") && curves.contains("learning rate"));
    assert!(curves.matches("<circle").count() >= 3, "{curves}");

    // The integer net follows the float model on held-out positions: the forward pass
    // trains with parameters on the integer grid, so only the last rounding differs
    // (tolerance: 1.5 internal units on average, 8 at most; a pawn is 208).
    let (mean, max) = first.quantization_error;
    assert!(mean < 1.5 && max < 8.0, "quantisation error mean {mean}, max {max}");

    // The same seed gives the same net, byte for byte.
    let again = train::run(&args(data.clone(), &dir.join("b"), 3)).unwrap();
    assert!(std::fs::read(&again.net).unwrap() == bytes, "a second run with the seed differs");

    // Stopping after one epoch and resuming gives the same net as running straight through.
    train::run(&TrainArgs { stop_after: Some(1), ..args(data.clone(), &dir.join("c"), 3) })
        .unwrap();
    let resumed = train::run(&TrainArgs { resume: true, ..args(data, &dir.join("c"), 3) }).unwrap();
    assert!(std::fs::read(&resumed.net).unwrap() == bytes, "the resumed run differs");
}

#[test]
fn a_run_gives_the_same_net_on_one_thread_and_on_three() {
    let dir = TempDir::new("threads");
    let Some(data) = sample_data(&dir, 8_000) else { return };
    let net_on = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let out = dir.join(format!("t{threads}"));
        let report = pool.install(|| train::run(&args(data.clone(), &out, 2))).unwrap();
        std::fs::read(report.net).unwrap()
    };
    assert!(net_on(1) == net_on(3), "the thread count changed the net");
}

#[test]
fn a_run_started_from_a_net_continues_that_net() {
    let dir = TempDir::new("init");
    let Some(data) = sample_data(&dir, 8_000) else { return };
    let start = dir.join("start.nnue");
    let start_bytes = nue::nnue::default_network().to_bytes();
    std::fs::write(&start, &start_bytes).unwrap();
    let from_start = |out: &str, lr: f32| TrainArgs {
        init: Some(start.clone()),
        lr,
        ..args(data.clone(), &dir.join(out), 1)
    };

    // Without a step size nothing moves: the exported net is the one it started from.
    let unchanged = train::run(&from_start("still", 0.0)).unwrap();
    assert!(std::fs::read(&unchanged.net).unwrap() == start_bytes, "--init did not load the net");

    // A trained start is far better on held-out games than random weights after the
    // same epoch of training.
    let continued = train::run(&from_start("continued", 2e-3)).unwrap();
    let fresh = train::run(&args(data.clone(), &dir.join("fresh"), 1)).unwrap();
    assert!(
        continued.validation_loss < 0.8 * fresh.validation_loss,
        "from the net {}, from scratch {}",
        continued.validation_loss,
        fresh.validation_loss
    );

    let err = train::run(&TrainArgs { init: Some(dir.join("none.nnue")), ..args(data, &dir, 1) })
        .unwrap_err();
    assert!(format!("{err:#}").contains("none.nnue"), "{err:#}");
}

#[test]
fn a_validation_file_gives_every_run_the_same_held_out_games() {
    let dir = TempDir::new("validation-file");
    let Some(data) = sample_data(&dir, 8_000) else { return };
    let held = dir.join("held.txt.gz");
    std::fs::copy(&data, &held).unwrap();
    let start = dir.join("start.nnue");
    std::fs::write(&start, nue::nnue::default_network().to_bytes()).unwrap();
    let with_file = |out: &str| TrainArgs {
        validation_data: vec![held.clone()],
        validation: 500,
        scale: Some(400.0),
        ..args(data.clone(), &dir.join(out), 1)
    };

    // Validating the start net reads no training data: a missing --data file is no error,
    // and the loss is that of the net's first epoch without steps.
    let only = TrainArgs {
        init: Some(start.clone()),
        validate_only: true,
        data: vec![dir.join("absent.txt.gz")],
        ..with_file("only")
    };
    let validated = train::run(&only).unwrap();
    assert_eq!(validated.net, start);
    assert!(!dir.join("only/run/log.tsv").exists(), "--validate-only trained");
    let still = train::run(&TrainArgs { init: Some(start.clone()), lr: 0.0, ..with_file("still") })
        .unwrap();
    assert_eq!(validated.validation_loss, still.validation_loss);

    // The held-out set is the file's tail, whatever the training data: training on a
    // different slice leaves the loss of the untouched start net the same.
    let other_dir = TempDir::new("validation-file-other");
    let Some(other) = sample_data(&other_dir, 3_000) else { return };
    let elsewhere = train::run(&TrainArgs {
        init: Some(start.clone()),
        lr: 0.0,
        data: vec![other],
        ..with_file("elsewhere")
    })
    .unwrap();
    assert_eq!(elsewhere.validation_loss, still.validation_loss);

    // A file both trained and validated on is refused, however it is named.
    let twice = TrainArgs { data: vec![dir.to_path_buf()], ..with_file("twice") };
    let err = train::run(&twice).unwrap_err();
    assert!(format!("{err:#}").contains("both as --data and as --validation-data"), "{err:#}");

    // Nothing to validate is a clear error.
    let err = train::run(&TrainArgs { validate_only: true, ..with_file("none") }).unwrap_err();
    assert!(format!("{err:#}").contains("--validate-only needs a net"), "{err:#}");
}

#[test]
fn the_validation_loss_is_reported_at_the_validation_lambda() {
    let dir = TempDir::new("validation-lambda");
    let Some(data) = sample_data(&dir, 4_000) else { return };
    let start = dir.join("start.nnue");
    std::fs::write(&start, nue::nnue::default_network().to_bytes()).unwrap();
    let run = |out: &str, lambda: f32, validation_lambda: Option<f32>, validate_only: bool| {
        train::run(&TrainArgs {
            init: Some(start.clone()),
            lr: 0.0,
            lambda,
            validation_lambda,
            validate_only,
            scale: Some(400.0),
            ..args(data.clone(), &dir.join(out), 1)
        })
    };
    let at_one = run("one", 1.0, None, true).unwrap().validation_loss;
    let at_half = run("half", 0.5, None, true).unwrap().validation_loss;
    assert_ne!(at_one, at_half, "λ changed nothing, so this test could not fail");
    // A run at λ 0.5 (the net left as it was by a zero learning rate) reports the loss at
    // the validation λ, both when training and when only validating.
    assert_eq!(run("trained", 0.5, Some(1.0), false).unwrap().validation_loss, at_one);
    // The log says at which λ its validation column was taken.
    let log = std::fs::read_to_string(dir.join("trained/run/log.tsv")).unwrap();
    let last_column: Vec<&str> = log.lines().map(|l| l.rsplit('\t').next().unwrap()).collect();
    assert_eq!(last_column, ["validation_lambda", "1"], "{log}");
    assert_eq!(run("checked", 0.5, Some(1.0), true).unwrap().validation_loss, at_one);

    let err = run("bad", 0.5, Some(1.5), true).unwrap_err();
    assert!(format!("{err:#}").contains("--validation-lambda"), "{err:#}");
}

#[test]
fn a_loss_power_outside_its_range_is_refused() {
    let dir = TempDir::new("power");
    let Some(data) = sample_data(&dir, 100) else { return };
    for bad in [1.0, 0.5, -2.0, 9.0, f32::NAN] {
        let err = train::run(&TrainArgs { loss_power: Some(bad), ..args(data.clone(), &dir, 1) })
            .unwrap_err();
        assert!(format!("{err:#}").contains("--loss-power"), "{bad}: {err:#}");
    }
}
