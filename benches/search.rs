//! Move generation and search speed: perft from the start position, and fixed-depth
//! searches of bench positions (the same work `nue bench` times, in criterion's hands).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use nue::{
    api::{Control, Limits},
    bench::POSITIONS,
    engine::{parse_position, Engine},
    perft::perft,
};
use shakmaty::{CastlingMode, Chess};

fn movegen(c: &mut Criterion) {
    let start = Chess::default();
    let kiwipete = parse_position(
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        CastlingMode::Standard,
    )
    .unwrap();
    let mut group = c.benchmark_group("perft");
    group.sample_size(10);
    group.bench_function("startpos_4", |b| b.iter(|| perft(black_box(&start), 4)));
    group.bench_function("kiwipete_3", |b| b.iter(|| perft(black_box(&kiwipete), 3)));
    group.finish();
}

fn search(c: &mut Criterion) {
    let mut engine = Engine::new(16).unwrap();
    let limits = Limits { depth: Some(9), ..Limits::default() };
    let mut group = c.benchmark_group("search");
    group.sample_size(10);
    for (i, fen) in POSITIONS.iter().enumerate().step_by(10) {
        let pos = parse_position(fen, CastlingMode::Standard).unwrap();
        group.bench_function(format!("bench_position_{i}_depth_9"), |b| {
            b.iter(|| {
                engine.new_game();
                engine.set_position(pos.clone(), &[]);
                engine.go(&limits, &Control::default(), &mut |_| {}).nodes
            })
        });
    }
    group.finish();
}

criterion_group!(benches, movegen, search);
criterion_main!(benches);
