//! `nue train`: trains a HalfKP 256x2-32-32 net on the CPU and exports it in the
//! Stockfish 12 format.
//!
//! The run: load the data (through the binary cache of [`data`]), hold out the last
//! games of every file for validation, shuffle the rest with the seed, fit the sigmoid
//! scale to the game results, then train the float [`model::Model`] with Adam and a
//! cosine learning-rate schedule. After every epoch it writes a checkpoint that `--resume`
//! continues from, and that epoch's quantised net (`epoch-N.nnue`, so that games can choose
//! among them); at the end it names the net by its content hash and reports how far the
//! integer net strays from the float model on the held-out positions.
//!
//! The parts, from the top down: the run (this file); the float [`model`], its forward
//! and backward passes and Adam, trained on the batches of [`data`]; its quantisation
//! (`quantize.rs`: the integer grid it trains on, and the export to the integer net); the
//! shapes and units both share (`layout.rs`); and the hot loops' choice of instructions
//! (`simd.rs`), which knows nothing of the model. Beside them, [`wdl_fit`] fits the
//! engine's win/draw/loss model (`nue wdl-fit`).

pub mod data;
mod layout;
pub mod model;
mod quantize;
mod simd;
pub mod wdl_fit;

use std::{
    fs::File,
    io::{BufReader, BufWriter, Read, Write},
    path::{Path, PathBuf},
    time::Instant,
};

use anyhow::{bail, ensure, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use self::{
    data::{Batch, Packed},
    model::{Loss, Model, Objective, StepParams},
};
use crate::{
    nnue::{simd::Simd, to_internal, Network},
    rng::Rng,
};

/// Options of `nue train`.
#[derive(Clone, Debug, clap::Args)]
pub struct TrainArgs {
    /// Training data: files of `<fen> | <score> | <result>` lines or of game chains
    /// (what `nue datagen` writes), plain or gzip, whatever their names, or folders of
    /// `*.txt` and `*.txt.gz` files.
    #[arg(long = "data", num_args = 1.., required = true)]
    pub data: Vec<PathBuf>,
    /// Which positions of the data to train on.
    #[command(flatten)]
    pub filter: data::Filter,
    /// Folder for the checkpoint, the log and the exported nets.
    #[arg(long, default_value = "runs/default")]
    pub out: PathBuf,
    /// Folder for the binary caches of the data files, shared between runs.
    #[arg(long, default_value = "runs/cache")]
    pub cache: PathBuf,
    /// Passes over the training positions.
    #[arg(long, default_value_t = 30)]
    pub epochs: usize,
    /// Positions per optimiser step.
    #[arg(long, default_value_t = 16384)]
    pub batch_size: usize,
    /// Initial Adam learning rate.
    #[arg(long, default_value_t = 1e-3)]
    pub lr: f32,
    /// Learning rate at the end of the cosine schedule, as a fraction of `--lr`.
    #[arg(long, default_value_t = 0.02)]
    pub final_lr: f32,
    /// Target blend: 1.0 trains on search scores only, 0.0 on game results only. The
    /// default, 1.0, played about 49 Elo better than 0.75 (`nets/log.md`).
    #[arg(long, default_value_t = 1.0)]
    pub lambda: f32,
    /// The λ of the reported validation loss (default: `--lambda`). Runs trained at
    /// different λ compare by their logs only when they validate at the same one.
    #[arg(long)]
    pub validation_lambda: Option<f32>,
    /// Train on |σ(eval/scale) − target|^P instead of the cross-entropy (P > 1; 2.5 is
    /// nnue-pytorch's choice). The validation loss is reported as cross-entropy either
    /// way, so runs compare; the train loss is the objective's.
    #[arg(long)]
    pub loss_power: Option<f32>,
    /// Sigmoid scale in internal units (win probability = σ(eval/scale)); fitted to the
    /// data's results when not given.
    #[arg(long)]
    pub scale: Option<f32>,
    /// Positions held out for validation: the last games of each data file, or of the
    /// `--validation-data` files when they are given.
    #[arg(long, default_value_t = 200_000)]
    pub validation: usize,
    /// Files (or folders) of games kept apart for validation: the last `--validation`
    /// positions of these files, in proportion to their sizes, are the validation set,
    /// and nothing of `--data` is held out. The same files give every run the same
    /// validation set, so that losses compare across nets trained on different data.
    #[arg(long = "validation-data", num_args = 1..)]
    pub validation_data: Vec<PathBuf>,
    /// Report the validation loss of the `--init` net (or of the checkpoint with
    /// `--resume`) and stop, without training. With `--validation-data` the training data
    /// is not read, and the sigmoid scale (unless `--scale`) is fitted on the validation set.
    #[arg(long)]
    pub validate_only: bool,
    /// Seed of the initial weights and of every shuffle: the same seed and data reproduce
    /// the same net.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Continue from the checkpoint in `--out` instead of starting afresh.
    #[arg(long)]
    pub resume: bool,
    /// Stop once this many epochs are done, leaving a checkpoint to `--resume` from; the
    /// learning-rate schedule still spans `--epochs`, so a run split this way gives the
    /// same net as one run straight through.
    #[arg(long)]
    pub stop_after: Option<usize>,
    /// Start from this net (a `.nnue` file of ours) instead of random weights, so that a
    /// new net keeps what an earlier one learned from data it may no longer have. The
    /// optimiser and the learning-rate schedule start afresh.
    #[arg(long)]
    pub init: Option<PathBuf>,
    /// Train on positions as they are only, without their left-right mirror images.
    #[arg(long)]
    pub no_mirror: bool,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
}

/// What a finished run produced.
#[derive(Debug)]
pub struct TrainReport {
    /// The exported net.
    pub net: PathBuf,
    /// Validation loss of the float model after the last epoch.
    pub validation_loss: f64,
    /// Mean and largest |integer − float| evaluation on held-out positions, internal units.
    pub quantization_error: (f64, f64),
}

const CHECKPOINT_MAGIC: &[u8; 8] = b"NUECKPT1";

/// Runs `nue train`.
pub fn run(args: &TrainArgs) -> Result<TrainReport> {
    if let Some(n) = args.threads {
        // Ignore the error when a pool exists already (tests call `run` repeatedly).
        let _ = rayon::ThreadPoolBuilder::new().num_threads(n).build_global();
    }
    ensure!(args.epochs > 0, "--epochs must be at least 1");
    ensure!(args.batch_size > 0, "--batch-size must be at least 1");
    ensure!((0.0..=1.0).contains(&args.lambda), "--lambda must lie in 0..=1");
    let validation_lambda = args.validation_lambda.unwrap_or(args.lambda);
    ensure!((0.0..=1.0).contains(&validation_lambda), "--validation-lambda must lie in 0..=1");
    let objective = match args.loss_power {
        None => Objective::CrossEntropy,
        Some(p) if p > 1.0 && p <= 8.0 => Objective::Power(p),
        Some(p) => bail!("--loss-power must lie above 1 and at most 8, not {p}"),
    };
    let checkpoint = args.out.join("checkpoint.bin");
    ensure!(
        !args.validate_only || args.init.is_some() || (args.resume && checkpoint.exists()),
        "--validate-only needs a net to validate: --init NET, or --resume with a checkpoint in {}",
        args.out.display()
    );
    if !args.validation_data.is_empty() && !args.validate_only {
        let canonical = |paths: &[PathBuf]| -> Result<Vec<PathBuf>> {
            data::expand(paths)?
                .iter()
                .map(|p| p.canonicalize().with_context(|| format!("cannot read {}", p.display())))
                .collect()
        };
        let held = canonical(&args.validation_data)?;
        if let Some(both) = canonical(&args.data)?.iter().find(|p| held.contains(p)) {
            bail!(
                "{} is given both as --data and as --validation-data: its games would be \
                 trained on and validated on",
                both.display()
            );
        }
    }
    let (mut training, validation) = if args.validation_data.is_empty() {
        split(data::load_all(&args.data, &args.cache, &args.filter)?, args.validation)
    } else {
        let held = data::load_all(&args.validation_data, &args.cache, &args.filter)?;
        let training = if args.validate_only {
            Vec::new()
        } else {
            data::load_all(&args.data, &args.cache, &args.filter)?.concat()
        };
        (training, tail(held, args.validation))
    };
    Rng::new(args.seed).shuffle(&mut training);
    let (training, validation) = (&training[..], &validation[..]);
    ensure!(!training.is_empty() || args.validate_only, "no positions left to train on");
    ensure!(!validation.is_empty(), "no positions held out for validation");
    // Only now: a run refused for its arguments or its data leaves no folder behind.
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    eprintln!("{} training positions, {} held out", training.len(), validation.len());
    if args.filter.window() > 1 {
        eprintln!("chain positions labelled with the mean score of {} plies", args.filter.window());
    }

    let scale = match args.scale {
        Some(s) => s,
        None => {
            let (sample, on) = if training.is_empty() {
                (validation, "the validation set")
            } else {
                (training, "the training set")
            };
            let s = fit_scale(&sample[..sample.len().min(1_000_000)]);
            eprintln!(
                "fitted sigmoid scale on {on}: {s:.1} internal units (σ(eval/scale) ~ expected result)"
            );
            s
        }
    };

    let mut model = match &args.init {
        Some(path) => {
            let net = Network::load(path)?;
            eprintln!("starting from {}", path.display());
            Model::from_network(&net)
        }
        None => Model::new(args.seed),
    };
    let mut first_epoch = 0;
    if args.resume && checkpoint.exists() {
        first_epoch = load_checkpoint(&checkpoint, &mut model)?;
        eprintln!("resuming after epoch {first_epoch} ({} steps)", model.steps);
    }

    let validation_batch = Batch::new(validation);
    if args.validate_only {
        let validation_loss = model.loss(&validation_batch, validation_lambda, scale).mean();
        eprintln!("validation loss {validation_loss:.6} (λ {validation_lambda}, scale {scale:.1})");
        let net = model.quantize();
        let quantization_error =
            quantization_error(&model, &net, &validation[..validation.len().min(20_000)]);
        let net = args.init.clone().unwrap_or(checkpoint);
        return Ok(TrainReport { net, validation_loss, quantization_error });
    }
    let steps_per_epoch = training.len().div_ceil(args.batch_size);
    let total_steps = (steps_per_epoch * args.epochs) as f64;
    let mut log =
        std::fs::OpenOptions::new().create(true).append(true).open(args.out.join("log.tsv"))?;
    if first_epoch == 0 {
        writeln!(
            log,
            "epoch\ttrain_loss\tvalidation_loss\tlr\tseconds\tpositions_per_second\tvalidation_lambda"
        )?;
    }
    let mut validation_loss = f64::NAN;
    let last_epoch = args.stop_after.unwrap_or(args.epochs).min(args.epochs);
    for epoch in first_epoch..last_epoch {
        let start = Instant::now();
        let mut order: Vec<u32> = (0..training.len() as u32).collect();
        Rng::new(args.seed ^ (epoch as u64 + 1).wrapping_mul(0x9E37_79B9)).shuffle(&mut order);
        let bar = progress_bar(training.len() as u64, epoch + 1, args.epochs);
        let mut epoch_loss = Loss::default();
        let mut lr = args.lr;
        for (i, indices) in order.chunks(args.batch_size).enumerate() {
            let positions: Vec<Packed> = indices.iter().map(|&j| training[j as usize]).collect();
            let batch = if args.no_mirror {
                Batch::new(&positions)
            } else {
                let step = (epoch * steps_per_epoch + i) as u64;
                Batch::augmented(
                    &positions,
                    &mut Rng::new(args.seed ^ step.wrapping_mul(0xA24B_AED4_963E_E407)),
                )
            };
            let progress = (epoch * steps_per_epoch + i) as f64 / total_steps;
            lr = cosine(args.lr, args.lr * args.final_lr, progress);
            let loss =
                model.train_step(&batch, StepParams { lr, lambda: args.lambda, scale, objective });
            epoch_loss.sum += loss.sum;
            epoch_loss.count += loss.count;
            bar.inc(indices.len() as u64);
            bar.set_message(format!("loss {:.5}", epoch_loss.mean()));
        }
        bar.finish_and_clear();
        model.sync();
        let seconds = start.elapsed().as_secs_f64();
        validation_loss = model.loss(&validation_batch, validation_lambda, scale).mean();
        let speed = training.len() as f64 / seconds;
        eprintln!(
            "epoch {:>3}/{}: train loss {:.5}, validation loss {:.5} (λ {}), lr {:.2e}, {:.0} s, {:.0} positions/s",
            epoch + 1,
            args.epochs,
            epoch_loss.mean(),
            validation_loss,
            validation_lambda,
            lr,
            seconds,
            speed
        );
        writeln!(
            log,
            "{}\t{:.6}\t{:.6}\t{:.3e}\t{:.1}\t{:.0}\t{}",
            epoch + 1,
            epoch_loss.mean(),
            validation_loss,
            lr,
            seconds,
            speed,
            validation_lambda
        )?;
        // The curves so far, beside the log (a picture is not worth stopping a run for).
        let drawn = crate::plot::read_training_log(&args.out.join("log.tsv")).and_then(|log| {
            crate::plot::training_curves(
                &[(crate::plot::run_name(&args.out), log)],
                &args.out.join("curves.svg"),
            )
        });
        if let Err(e) = drawn {
            eprintln!("warning: could not draw curves.svg: {e:#}");
        }
        save_checkpoint(&checkpoint, &mut model, epoch + 1)?;
        // Every epoch's net stays, so that games can choose among them.
        std::fs::write(
            args.out.join(format!("epoch-{}.nnue", epoch + 1)),
            model.quantize().to_bytes(),
        )?;
    }

    if last_epoch < args.epochs {
        eprintln!("stopped after epoch {last_epoch} of {}: continue with --resume", args.epochs);
    }
    let net = model.quantize();
    let bytes = net.to_bytes();
    let path = args.out.join(net_name(&bytes));
    std::fs::write(&path, &bytes).with_context(|| format!("cannot write {}", path.display()))?;
    let quantization_error =
        quantization_error(&model, &net, &validation[..validation.len().min(20_000)]);
    eprintln!(
        "exported {}: integer vs float evaluation on held-out positions: mean |diff| {:.2}, max {:.1} internal units",
        path.display(),
        quantization_error.0,
        quantization_error.1
    );
    Ok(TrainReport { net: path, validation_loss, quantization_error })
}

/// Splits the sources into training and held-out positions: the last positions of each
/// file, in proportion to its size, up to `wanted` in all (at most a tenth of the data).
/// A file lists its games one after the other, so the held-out positions are whole games
/// the net never sees; positions drawn at random would share games with the training
/// set, and the validation loss would reward memorising them.
pub fn split(sources: Vec<Vec<Packed>>, wanted: usize) -> (Vec<Packed>, Vec<Packed>) {
    let total: usize = sources.iter().map(Vec::len).sum();
    take_tails(sources, wanted.min(total / 10))
}

/// The last positions of each file, in proportion to its size, `wanted` in all (or every
/// position when there are fewer): a validation set of whole games from files kept apart.
/// Copies only the tails; the rest of each file is dropped.
pub fn tail(sources: Vec<Vec<Packed>>, wanted: usize) -> Vec<Packed> {
    let total: usize = sources.iter().map(Vec::len).sum();
    let held = wanted.min(total);
    let mut tails = Vec::with_capacity(held);
    for positions in &sources {
        tails.extend_from_slice(
            &positions[positions.len() - tail_len(held, positions.len(), total)..],
        );
    }
    tails
}

/// Splits off the last positions of each file, in proportion to its size, `held` in all:
/// returns the rest and the tails, each in file order.
fn take_tails(sources: Vec<Vec<Packed>>, held: usize) -> (Vec<Packed>, Vec<Packed>) {
    let total: usize = sources.iter().map(Vec::len).sum();
    let (mut rest, mut tails) = (Vec::with_capacity(total - held), Vec::with_capacity(held));
    for mut positions in sources {
        let tail = tail_len(held, positions.len(), total);
        tails.extend(positions.drain(positions.len() - tail..));
        rest.extend(positions);
    }
    (rest, tails)
}

/// A file's share of `held` tail positions: in proportion to its `len` of `total`, rounded down.
fn tail_len(held: usize, len: usize, total: usize) -> usize {
    (held as u128 * len as u128 / total.max(1) as u128) as usize
}

/// `nn-<first 12 hex digits of sha256>.nnue`, the name Stockfish gives its nets.
pub fn net_name(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("nn-{hex}.nnue")
}

fn cosine(start: f32, end: f32, progress: f64) -> f32 {
    let p = progress.clamp(0.0, 1.0);
    end + (start - end) * (0.5 * (1.0 + (std::f64::consts::PI * p).cos())) as f32
}

fn progress_bar(len: u64, epoch: usize, epochs: usize) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "epoch {epoch}/{epochs} [{{bar:30}}] {{human_pos}}/{{human_len}} {{per_sec}} ETA {{eta}} {{msg}}"
        ))
        .expect("a valid template")
        .progress_chars("=> "),
    );
    bar
}

/// The scale `s` minimising the cross-entropy between σ(score/s) and the game results:
/// how many internal units make the data's scores "one logit" of winning chances.
pub fn fit_scale(sample: &[Packed]) -> f32 {
    // Golden-section search on ln s over 50..5000 internal units. Near the minimum the
    // two costs compared differ by less than their rounding, so the costs must be
    // reproducible for the scale to be.
    let (mut a, mut b) = (50f64.ln(), 5000f64.ln());
    let r = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..40 {
        let (c, d) = (b - r * (b - a), a + r * (b - a));
        if result_cost(sample, c.exp()) < result_cost(sample, d.exp()) {
            b = d;
        } else {
            a = c;
        }
    }
    ((a + b) / 2.0).exp() as f32
}

/// Cross-entropy between σ(score/s) and the results of `sample`, summed in fixed blocks
/// and the blocks in order: rayon splits work as threads steal it, and a float sum
/// depends on its grouping, so a plain parallel sum differs from run to run.
fn result_cost(sample: &[Packed], s: f64) -> f64 {
    let blocks: Vec<f64> = sample
        .par_chunks(model::SUM_BLOCK)
        .map(|block| {
            block
                .iter()
                .map(|p| {
                    let q = (f64::from(p.score()) / s).clamp(-30.0, 30.0);
                    let y = f64::from(p.result());
                    // −[y ln σ(q) + (1−y) ln σ(−q)]
                    (1.0 + (-q).exp()).ln() + (1.0 - y) * q
                })
                .sum::<f64>()
        })
        .collect();
    blocks.iter().sum()
}

/// Mean and largest |integer − float| over `positions`, in internal units.
pub fn quantization_error(model: &Model, net: &Network, positions: &[Packed]) -> (f64, f64) {
    let simd = Simd::detect();
    let diffs: Vec<f64> = positions
        .par_iter()
        .map(|p| {
            let (features, n) = p.features();
            let float = model.evaluate(&features, n);
            let int = to_internal(net.evaluate(simd, &p.board(), p.turn()));
            (f64::from(int) - f64::from(float)).abs()
        })
        .collect();
    let mean = diffs.iter().sum::<f64>() / diffs.len().max(1) as f64;
    (mean, diffs.iter().copied().fold(0.0, f64::max))
}

fn save_checkpoint(path: &Path, model: &mut Model, epochs_done: usize) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let mut w = BufWriter::new(File::create(&tmp)?);
    w.write_all(CHECKPOINT_MAGIC)?;
    w.write_all(&(epochs_done as u64).to_le_bytes())?;
    w.write_all(&model.steps.to_le_bytes())?;
    for part in model.state_mut() {
        w.write_all(bytemuck::cast_slice(part))?;
    }
    w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

fn load_checkpoint(path: &Path, model: &mut Model) -> Result<usize> {
    let mut r = BufReader::new(File::open(path)?);
    let mut header = [0u8; 24];
    r.read_exact(&mut header)?;
    ensure!(&header[..8] == CHECKPOINT_MAGIC, "{} is not a nue checkpoint", path.display());
    let epochs_done = u64::from_le_bytes(header[8..16].try_into().expect("8 bytes")) as usize;
    model.steps = u64::from_le_bytes(header[16..24].try_into().expect("8 bytes"));
    for part in model.state_mut() {
        r.read_exact(bytemuck::cast_slice_mut(part))
            .with_context(|| format!("{} is truncated", path.display()))?;
    }
    model.after_load();
    Ok(epochs_done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(from: u8, n: usize) -> Vec<Packed> {
        let mut p = Packed::default();
        (0..n)
            .map(|i| {
                // Tag each position through its bytes so the test can follow it.
                let mut bytes = bytemuck::bytes_of(&p).to_vec();
                bytes[0] = from;
                bytes[1] = i as u8;
                p = *bytemuck::from_bytes(&bytes);
                p
            })
            .collect()
    }

    /// Positions of the start board with scores and results spread so that a float sum
    /// over them depends on its grouping.
    fn scored(n: usize) -> Vec<Packed> {
        let board = shakmaty::Board::default();
        (0..n)
            .map(|i| {
                let score = (i as i32 * 7919) % 1201 - 600;
                let result = [0.0, 0.5, 1.0][i % 3];
                Packed::new(&board, shakmaty::Color::White, score, result).unwrap()
            })
            .collect()
    }

    #[test]
    fn the_scale_fit_does_not_depend_on_the_thread_count() {
        let sample = scored(200_000);
        let with = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let costs: Vec<u64> =
                    [150.0, 361.5, 800.0].map(|s| result_cost(&sample, s).to_bits()).to_vec();
                (costs, fit_scale(&sample).to_bits())
            })
        };
        let one = with(1);
        assert_eq!(with(2), one);
        assert_eq!(with(3), one);
        assert_eq!(with(8), one);
    }

    #[test]
    fn held_out_positions_are_the_tail_of_each_file() {
        let (training, validation) = split(vec![numbered(1, 100), numbered(2, 200)], 30);
        let tag = |p: &Packed| (bytemuck::bytes_of(p)[0], bytemuck::bytes_of(p)[1]);
        let held: Vec<(u8, u8)> = validation.iter().map(tag).collect();
        let expected: Vec<(u8, u8)> =
            (90..100).map(|i| (1, i)).chain((180..200).map(|i| (2, i))).collect();
        assert_eq!(held, expected);
        let kept: Vec<(u8, u8)> = training.iter().map(tag).collect();
        let rest: Vec<(u8, u8)> = (0..90).map(|i| (1, i)).chain((0..180).map(|i| (2, i))).collect();
        assert_eq!(kept, rest);
        // Never more than a tenth of the data.
        assert_eq!(split(vec![numbered(1, 100)], 1000).1.len(), 10);
    }

    #[test]
    fn a_validation_file_gives_the_same_tails_as_the_split() {
        let sources = || vec![numbered(1, 100), numbered(2, 200)];
        assert_eq!(tail(sources(), 30), split(sources(), 30).1);
        // A file kept apart may be held out whole, but no more than it holds.
        assert_eq!(tail(sources(), 1000).len(), 300);
        assert_eq!(tail(sources(), 1000), sources().concat());
    }
}
