//! Trainer throughput: one optimiser step on a batch of real positions from
//! `../shared/data`, reported in positions per second.

use std::{
    io::{BufRead, BufReader},
    path::PathBuf,
};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use flate2::read::MultiGzDecoder;
use nue::train::{
    data::{parse_line, Batch},
    model::{Model, Objective, StepParams},
};

const BATCH: usize = 16384;

fn positions() -> Vec<nue::train::data::Packed> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/sf15-d7-part2.txt.gz");
    let file = std::fs::File::open(&path).expect("the shared training data");
    BufReader::new(MultiGzDecoder::new(file))
        .lines()
        .take(BATCH)
        .filter_map(|l| parse_line(&l.ok()?).ok())
        .collect()
}

fn train_step(c: &mut Criterion) {
    let batch = Batch::new(&positions());
    let mut model = Model::new(1);
    let params =
        StepParams { lr: 1e-3, lambda: 0.75, scale: 400.0, objective: Objective::CrossEntropy };
    let mut group = c.benchmark_group("train");
    group.sample_size(10);
    group.throughput(Throughput::Elements(batch.len() as u64));
    group.bench_function(format!("step_batch_{BATCH}"), |b| {
        b.iter(|| model.train_step(&batch, params))
    });
    group.finish();
}

fn forward_only(c: &mut Criterion) {
    let batch = Batch::new(&positions());
    let model = Model::new(1);
    let mut group = c.benchmark_group("train");
    group.sample_size(10);
    group.throughput(Throughput::Elements(batch.len() as u64));
    group.bench_function("forward_only", |b| b.iter(|| model.loss(&batch, 0.75, 400.0)));
    group.finish();
}
criterion_group!(benches, train_step, forward_only);
criterion_main!(benches);
