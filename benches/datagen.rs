//! Data generation speed: positions per second of one worker (one core), playing a fixed
//! set of games as `nue datagen` does, with Nue's own search at its default 5,000 soft
//! nodes and with Stockfish at depth 5 (Debian's `/usr/games/stockfish`, or the engine
//! named by `NUE_BENCH_ENGINE`; skipped when there is none).
//!
//! Criterion reports the throughput in positions (recorded plies) per second. The games
//! are the first games of a seed, so every sample plays the same positions: the players
//! are deterministic once `new_game` has cleared their tables.

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nue::datagen::{play_game, NuePlayer, Openings, Player, Rules, UciPlayer, DEFAULT_NODES};

/// Games per sample: enough openings that one odd game does not decide the figure.
const GAMES: u64 = 4;
const SEED: u64 = 1;

/// Plays the bench's games and returns the positions recorded.
fn play(player: &mut dyn Player) -> u64 {
    (0..GAMES)
        .map(|index| {
            let played = play_game(
                player,
                &Openings::Start,
                8,
                &Rules::default(),
                SEED,
                index,
                0.0,
                &|| false,
            )
            .expect("a bench game")
            .expect("not abandoned");
            played.game.plies.len() as u64
        })
        .sum()
}

fn bench_player(c: &mut Criterion, name: &str, player: &mut dyn Player) {
    let positions = play(player);
    let mut group = c.benchmark_group("datagen");
    group.sample_size(10);
    group.throughput(Throughput::Elements(positions));
    group.bench_function(name, |b| b.iter(|| assert_eq!(play(player), positions)));
    group.finish();
}

fn datagen(c: &mut Criterion) {
    let mut nue = NuePlayer::new(16, DEFAULT_NODES, None).expect("Nue's search");
    bench_player(c, "nue_5000_nodes", &mut nue);

    let engine = std::env::var_os("NUE_BENCH_ENGINE")
        .map_or_else(|| PathBuf::from("/usr/games/stockfish"), PathBuf::from);
    if engine.exists() {
        let mut stockfish =
            UciPlayer::start(&engine, &[], "go depth 5".into()).expect("the UCI engine starts");
        bench_player(c, "stockfish_depth_5", &mut stockfish);
    } else {
        eprintln!("datagen/stockfish_depth_5: skipped, {} not found", engine.display());
    }
}

criterion_group!(benches, datagen);
criterion_main!(benches);
