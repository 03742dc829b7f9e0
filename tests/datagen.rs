//! `nue datagen` end to end, through the binary: the chains it writes replay legally,
//! their scores and results follow the adjudication rules, a seed reproduces a one-thread
//! run, another UCI engine can play instead of Nue or label Nue's games, Ctrl-C stops a
//! run cleanly, and the data trains a net.

mod common;

use std::{
    collections::HashMap,
    os::unix::process::CommandExt,
    path::Path,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use common::TempDir;
use nue::{
    board::key_of,
    chain::{Game, Lines},
    datagen::Rules,
    nnue::Network,
    train::data::parse_line,
};
use shakmaty::{CastlingMode, Color, Position};

/// Runs `nue` with `args` and returns its standard error; panics when it fails.
fn nue(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_nue")).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "nue {args:?} failed:\n{stderr}");
    stderr
}

/// Generates `games` games with Nue's search at a small node limit.
fn datagen(out: &Path, games: usize, seed: u64, extra: &[&str]) -> String {
    let (games, seed) = (games.to_string(), seed.to_string());
    let mut args =
        vec!["datagen", "--out", out.to_str().unwrap(), "--games", &games, "--seed", &seed];
    args.extend_from_slice(extra);
    nue(&args)
}

fn read_games(path: &Path) -> Vec<Game> {
    Lines::open(path)
        .unwrap()
        .map(|l| Game::parse(&l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Asserts that `game` ended for a reason the rules give, with the result that reason
/// gives.
fn assert_ending_follows_the_rules(game: &Game, rules: &Rules) {
    let end = game.end();
    let result = game.result;
    let line = game.to_line();
    // Endings by rule, in the final position.
    if end.is_checkmate() {
        assert_eq!(game.result_for(end.turn()), 0.0, "the mated side won: {line}");
        return;
    }
    let mut keys: HashMap<u64, u32> = HashMap::new();
    let mut pos = game.start.clone();
    *keys.entry(key_of(&pos)).or_default() += 1;
    for ply in &game.plies {
        if ply.mv.is_zeroing() {
            keys.clear();
        }
        pos.play_unchecked(ply.mv);
        *keys.entry(key_of(&pos)).or_default() += 1;
    }
    let threefold = keys[&key_of(&end)] >= 3;
    if end.is_stalemate() || end.is_insufficient_material() || end.halfmoves() >= 100 || threefold {
        assert_eq!(result, 0.5, "a draw by rule was scored {result}: {line}");
        return;
    }
    // Endings by the last scores.
    let scores: Vec<Option<i32>> = game.plies.iter().map(|p| p.score).collect();
    let last = *scores.last().unwrap();
    if last.is_none() {
        assert_ne!(result, 0.5, "a mate score ended a drawn game: {line}");
        return;
    }
    let tail = |n: usize| &scores[scores.len().saturating_sub(n)..];
    let won = |sign: i32| {
        scores.len() >= rules.win_plies
            && tail(rules.win_plies).iter().all(|s| s.is_some_and(|s| s * sign >= rules.win_bound))
    };
    if won(1) {
        assert_eq!(result, 1.0, "{line}");
        return;
    }
    if won(-1) {
        assert_eq!(result, 0.0, "{line}");
        return;
    }
    let ply_of_last = (game.start.fullmoves().get() as usize - 1) * 2
        + usize::from(game.start.turn() == Color::Black)
        + scores.len()
        - 1;
    let level = scores.len() >= rules.draw_plies
        && tail(rules.draw_plies).iter().all(|s| s.is_some_and(|s| s.abs() <= rules.draw_bound));
    if level && ply_of_last >= rules.draw_after {
        assert_eq!(result, 0.5, "{line}");
        return;
    }
    assert!(scores.len() >= rules.max_plies, "the game ended for no reason: {line}");
    assert_eq!(result, 0.5);
}

#[test]
fn generated_chains_replay_legally_and_follow_the_rules() {
    let dir = TempDir::new("rules");
    let out = dir.join("games.chain.txt.gz");
    let log = datagen(&out, 6, 5, &["--nodes", "400"]);
    assert!(log.contains("6 games"), "{log}");
    let games = read_games(&out);
    assert_eq!(games.len(), 6);
    let rules = Rules::default();
    for game in &games {
        // 8 or 9 random plies from the start, and the first score within the bound.
        let ply = (game.start.fullmoves().get() - 1) * 2 + u32::from(game.start.turn().is_black());
        assert!(ply == 8 || ply == 9, "opening of {ply} plies");
        let first = game.plies[0].score.expect("a searched opening score");
        assert!(first.abs() <= rules.opening_bound);
        // Scores are centipawns within the search's range (mates are written '#').
        assert!(game.plies.iter().flat_map(|p| p.score).all(|s| s.abs() < 15_000));
        assert_ending_follows_the_rules(game, &rules);
    }
}

#[test]
fn a_seed_reproduces_a_run_and_appending_continues_it() {
    let dir = TempDir::new("seed");
    let (a, b) = (dir.join("a.chain.txt.gz"), dir.join("b.chain.txt.gz"));
    datagen(&a, 4, 9, &["--nodes", "300"]);
    datagen(&b, 2, 9, &["--nodes", "300"]);
    // A second run appending to b continues with games 2 and 3 of the seed.
    let log = datagen(&b, 2, 9, &["--nodes", "300"]);
    assert!(log.contains("2 games already there"), "{log}");
    let lines = |p: &Path| Lines::open(p).unwrap().collect::<Vec<_>>();
    assert_eq!(lines(&a), lines(&b));
    // Another seed gives other games.
    let c = dir.join("c.chain.txt.gz");
    datagen(&c, 1, 10, &["--nodes", "300"]);
    assert_ne!(lines(&c)[0], lines(&a)[0]);
}

#[test]
fn a_uci_engine_can_play_and_label_from_a_book() {
    let dir = TempDir::new("engine");
    let book = dir.join("book.epd");
    std::fs::write(&book, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n").unwrap();
    let out = dir.join("engine.chain.txt.gz");
    let engine = env!("CARGO_BIN_EXE_nue");
    let book_arg = book.to_str().unwrap();
    let args = ["--engine", engine, "--depth", "3", "--book", book_arg, "--threads", "2"];
    datagen(&out, 2, 3, &args);
    let games = read_games(&out);
    assert_eq!(games.len(), 2);
    for game in &games {
        // Without --random-plies a book game starts at the book position itself.
        assert_eq!(game.start.turn(), Color::Black);
        assert_eq!(game.start.board().occupied().count(), 32);
        assert_ending_follows_the_rules(game, &Rules::default());
    }
}

#[test]
fn nue_can_play_and_a_uci_engine_label() {
    let dir = TempDir::new("label");
    let out = dir.join("label.chain.txt.gz");
    let engine = env!("CARGO_BIN_EXE_nue");
    let args = ["--nodes", "300", "--label-engine", engine, "--label-depth", "2"];
    let stderr = datagen(&out, 2, 5, &args);
    let games = read_games(&out);
    assert_eq!(games.len(), 2, "{stderr}");
    for game in &games {
        assert_ending_follows_the_rules(game, &Rules::default());
    }
    // Nue's search chose the moves: from the same start it plays the same game alone,
    // until the labeller's scores (or the search's own) end one of the two.
    let alone = dir.join("alone.chain.txt.gz");
    datagen(&alone, 2, 5, &["--nodes", "300"]);
    let alone = read_games(&alone);
    let mut same_starts = 0;
    for (labelled, own) in games.iter().zip(&alone).filter(|(a, b)| a.start == b.start) {
        same_starts += 1;
        let n = labelled.plies.len().min(own.plies.len());
        let moves = |g: &Game| g.plies[..n].iter().map(|p| p.mv).collect::<Vec<_>>();
        assert_eq!(moves(labelled), moves(own));
        // ...and the labeller gave the scores: they are not the search's own.
        let scores = |g: &Game| g.plies[..n].iter().map(|p| p.score).collect::<Vec<_>>();
        assert_ne!(scores(labelled), scores(own));
    }
    assert!(same_starts > 0, "no game began from the same opening");
}

/// Ctrl-C in a terminal sends SIGINT to the whole foreground process group. The run must
/// end as `--seconds` ends it (summary printed, success, only whole games in the file),
/// and the UCI engine it plays with must not be killed under it (that would be an error).
#[test]
fn ctrl_c_stops_a_run_with_its_summary_and_whole_games() {
    let dir = TempDir::new("sigint");
    let out = dir.join("s.chain.txt.gz");
    let engine = env!("CARGO_BIN_EXE_nue");
    let child = Command::new(engine)
        .args(["datagen", "--out", out.to_str().unwrap(), "--engine", engine, "--depth", "3"])
        .args(["--threads", "2", "--seed", "4"])
        .process_group(0)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The handler is in place before the file is created; wait for a first game.
    let start = Instant::now();
    while std::fs::metadata(&out).map_or(true, |m| m.len() == 0) {
        assert!(start.elapsed() < Duration::from_secs(120), "no game written in 120 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    let group = format!("-{}", child.id());
    let status = Command::new("kill").args(["-INT", "--", &group]).status().unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "datagen failed after SIGINT:\n{stderr}");
    assert!(stderr.contains("stopped by a signal"), "{stderr}");
    let games = read_games(&out);
    assert!(!games.is_empty());
    // The summary line (not a progress line) counts exactly the games in the file.
    let summary = format!("{}: {} games,", out.display(), games.len());
    assert!(stderr.contains(&summary), "{stderr}");
    // ...and its results, in the tally printed under it.
    let [wins, draws, losses] =
        [1.0, 0.5, 0.0].map(|r| games.iter().filter(|g| g.result == r).count());
    let results = format!("results: 1-0 {wins} (");
    assert!(stderr.contains(&results), "{results:?} not in {stderr}");
    assert!(stderr.contains(&format!(", 1/2-1/2 {draws} (")), "{stderr}");
    assert!(stderr.contains(&format!(", 0-1 {losses} (")), "{stderr}");
    for game in &games {
        assert_ending_follows_the_rules(game, &Rules::default());
    }
}

#[test]
fn bad_datagen_options_are_refused_with_a_message() {
    let dir = TempDir::new("bad");
    let out = dir.join("x.chain.txt.gz");
    let fail = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_nue")).args(args).output().unwrap();
        assert!(!o.status.success(), "{args:?} succeeded");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let out_arg = out.to_str().unwrap();
    let err = fail(&["datagen", "--out", out_arg, "--engine", "/no/such/engine", "--games", "1"]);
    assert!(err.contains("/no/such/engine"), "{err}");
    let err = fail(&["datagen", "--out", out_arg, "--book", "/no/such/book.epd", "--games", "1"]);
    assert!(err.contains("/no/such/book.epd"), "{err}");
    let err = fail(&["datagen", "--out", out_arg, "--games", "0"]);
    assert!(err.contains("--games"), "{err}");
    let err = fail(&["datagen", "--out", out_arg, "--games", "1", "--tree-out", out_arg]);
    assert!(err.contains("--tree-out must be another file"), "{err}");
    let tree = dir.join("tree.txt.gz");
    let tree = tree.to_str().unwrap();
    let rate = ["--games", "1", "--tree-out", tree, "--tree-rate", "0"];
    let err = fail(&[&["datagen", "--out", out_arg][..], &rate].concat());
    assert!(err.contains("--tree-rate"), "{err}");
    let err = fail(&["datagen", "--out", out_arg, "--games", "1", "--tree-rate", "0.5"]);
    assert!(err.contains("--tree-out"), "{err}");
    let label = ["datagen", "--out", out_arg, "--games", "1", "--label-engine", "/no/such/label"];
    let err = fail(&label);
    assert!(err.contains("--label-depth"), "{err}");
    let err = fail(&[&label[..], &["--label-depth", "4"]].concat());
    assert!(err.contains("/no/such/label"), "{err}");
    let err = fail(&[&label[..], &["--label-depth", "4", "--engine", "/no/such/engine"]].concat());
    assert!(err.contains("--engine"), "{err}");
    assert!(!out.exists(), "a refused run created its output");
}

/// Reads a `--tree-out` file: each line a position the trainer takes, quiet enough to
/// train on (not in check), with the result of one of `games`.
fn read_tree_positions(path: &Path, games: &[Game]) -> usize {
    let lines: Vec<String> = Lines::open(path).unwrap().collect();
    for line in &lines {
        assert!(parse_line(line).is_ok(), "the trainer rejects {line}");
        let fields: Vec<&str> = line.split(" | ").collect();
        let pos = nue::engine::parse_position(fields[0], CastlingMode::Standard).unwrap();
        assert!(!pos.is_check(), "{line}");
        let result: f32 = fields[2].parse().unwrap();
        assert!(games.iter().any(|g| g.result == result), "{line}");
    }
    lines.len()
}

#[test]
fn tree_positions_are_written_beside_the_games_by_either_player() {
    let dir = TempDir::new("tree");
    let (out, tree) = (dir.join("g.chain.txt.gz"), dir.join("t.txt.gz"));
    let log = datagen(&out, 2, 11, &["--nodes", "300", "--tree-out", tree.to_str().unwrap()]);
    let n = read_tree_positions(&tree, &read_games(&out));
    assert!(n > 0, "{log}");
    assert!(log.contains(&format!("{}: {n} tree positions", tree.display())), "{log}");
    // They are searched after each game, so the games are those of a run without them.
    let plain = dir.join("p.chain.txt.gz");
    datagen(&plain, 2, 11, &["--nodes", "300"]);
    let lines = |p: &Path| Lines::open(p).unwrap().collect::<Vec<_>>();
    assert_eq!(lines(&out), lines(&plain));

    // A UCI engine's principal variation, read from its info lines.
    let (out, tree) = (dir.join("u.chain.txt.gz"), dir.join("u.txt.gz"));
    let engine = env!("CARGO_BIN_EXE_nue");
    let tree_arg = tree.to_str().unwrap();
    let args = ["--engine", engine, "--depth", "3", "--tree-out", tree_arg, "--tree-rate", "0.5"];
    let log = datagen(&out, 1, 12, &args);
    let games = read_games(&out);
    let n = read_tree_positions(&tree, &games);
    assert!(n > 0, "{log}");
    // About half the searched moves give one, less those that are not quiet.
    assert!(n < games[0].plies.len(), "{n} tree positions from {} moves", games[0].plies.len());
}

#[test]
fn generated_data_trains_a_net_that_loads() {
    let dir = TempDir::new("train");
    // Named like neither layout: the trainer reads what the file holds.
    let data = dir.join("games");
    datagen(&data, 6, 21, &["--nodes", "300"]);
    let run = dir.join("run");
    let log = nue(&[
        "train",
        "--data",
        data.to_str().unwrap(),
        "--out",
        run.to_str().unwrap(),
        "--cache",
        dir.join("cache").to_str().unwrap(),
        "--epochs",
        "1",
        "--batch-size",
        "64",
        "--validation",
        "50",
        "--threads",
        "2",
    ]);
    assert!(log.contains("6 games, 0 malformed games skipped"), "{log}");
    let net = std::fs::read_dir(&run)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("nn-"))
        .expect("an exported net");
    Network::load(&net).unwrap();
    assert!(run.join("epoch-1.nnue").exists());
}
