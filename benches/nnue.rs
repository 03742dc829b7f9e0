//! NNUE inference speed: accumulator updates by move kind, full refreshes (what a king
//! move costs), the layers after the transformer, and a whole incremental evaluation,
//! each with the AVX2 and the scalar kernels.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use nue::{
    engine::{parse_move, parse_position},
    nnue::default_network,
    nnue::{accumulator::AccumulatorStack, features, simd::Simd, Half},
};
use shakmaty::{CastlingMode, Color, Position};

fn kernels() -> Vec<Simd> {
    let mut all = Vec::from_iter(Simd::vnni());
    all.extend(Simd::avx2());
    all.push(Simd::scalar());
    all
}

const MIDDLEGAME: &str = "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R1BQKB1R w KQ - 0 8";

fn updates(c: &mut Criterion) {
    let net = default_network();
    let rows: Vec<&Half> = (0..4).map(|i| net.row(1000 + 641 * i)).collect();
    let src = net.ft_bias;
    let mut dst = Half([0; 256]);
    let mut group = c.benchmark_group("update");
    for simd in kernels() {
        let name = simd.name();
        group.bench_function(format!("quiet/{name}"), |b| {
            b.iter(|| simd.update(&mut dst, black_box(&src), &rows[..1], &rows[1..2]))
        });
        group.bench_function(format!("capture/{name}"), |b| {
            b.iter(|| simd.update(&mut dst, black_box(&src), &rows[..1], &rows[1..3]))
        });
        group.bench_function(format!("castle/{name}"), |b| {
            b.iter(|| simd.update(&mut dst, black_box(&src), &rows[..2], &rows[2..4]))
        });
        // A king move refreshes its side: bias plus every active feature.
        let pos = parse_position(MIDDLEGAME, CastlingMode::Standard).unwrap();
        let active = features::active(pos.board(), Color::White);
        group.bench_function(format!("king_move_refresh/{name}"), |b| {
            b.iter(|| net.refresh(simd, black_box(&active), &mut dst))
        });
    }
    group.finish();
}

fn evaluation(c: &mut Criterion) {
    let net = default_network();
    let pos = parse_position(MIDDLEGAME, CastlingMode::Standard).unwrap();
    let mut group = c.benchmark_group("evaluate");
    for simd in kernels() {
        let name = simd.name();
        let mut stack = AccumulatorStack::new(simd);
        stack.reset(&net, pos.board());
        let us = *stack.accumulator(&net, pos.board(), Color::White);
        let them = *stack.accumulator(&net, pos.board(), Color::Black);
        group.bench_function(format!("layers/{name}"), |b| {
            b.iter(|| net.propagate(simd, black_box(&us), black_box(&them)))
        });
        // What the search pays per node: record a quiet move, bring both accumulators up
        // to date from the parent, run the layers, take the move back.
        let m = parse_move(&pos, "a2a3").unwrap();
        let mut after = pos.clone();
        after.play_unchecked(m);
        group.bench_function(format!("incremental/{name}"), |b| {
            b.iter(|| {
                stack.push_move(pos.turn(), nue::position::Move::from_shakmaty(m).unwrap());
                let v = stack.evaluate(&net, after.board(), after.turn());
                stack.pop();
                v
            })
        });
        group.bench_function(format!("full_refresh/{name}"), |b| {
            b.iter(|| net.evaluate(simd, black_box(after.board()), after.turn()))
        });
    }
    group.finish();
}

criterion_group!(benches, updates, evaluation);
criterion_main!(benches);
