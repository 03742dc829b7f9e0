//! `genfens`, as OpenBench's datagen workloads run it (`./engine "genfens N seed S book
//! <path|None>" "quit"`): N distinct legal positions, the same for the same seed, the
//! openings `nue datagen` would play with that seed, and bad arguments answered.

mod common;

use std::{collections::HashSet, process::Command};

use common::TempDir;
use nue::chain::{Game, Lines};
use shakmaty::{fen::Fen, CastlingMode, Chess, EnPassantMode, Position};

/// Runs `nue` with `args`; returns its exit success, standard output and error.
fn nue(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nue")).args(args).output().unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// The FENs of `genfens` as OpenBench asks for them, one argument and `quit`.
fn genfens(words: &str) -> Vec<String> {
    let (ok, stdout, stderr) = nue(&[&format!("genfens {words}"), "quit"]);
    assert!(ok, "genfens {words} failed: {stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    let fens: Vec<String> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("info string genfens "))
        .map(str::to_string)
        .collect();
    assert_eq!(fens.len(), lines.len(), "lines other than genfens ones: {stdout}");
    fens
}

fn position(fen: &str) -> Chess {
    fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap()
}

/// The position a FEN describes, move counters aside.
fn without_counters(fen: &str) -> String {
    fen.split(' ').take(4).collect::<Vec<_>>().join(" ")
}

#[test]
fn n_distinct_legal_positions_the_same_for_the_same_seed() {
    let fens = genfens("24 seed 31337 book None");
    assert_eq!(fens.len(), 24);
    let distinct: HashSet<String> = fens.iter().map(|f| without_counters(f)).collect();
    assert_eq!(distinct.len(), 24, "{fens:#?}");
    for fen in &fens {
        let pos = position(fen);
        assert!(!pos.legal_moves().is_empty(), "{fen} has no move");
        // Eight or nine random plies from the start.
        let ply = 2 * (pos.fullmoves().get() - 1) + u32::from(pos.turn().is_black());
        assert!((8..=9).contains(&ply), "{fen}: ply {ply}");
    }
    assert_eq!(genfens("24 seed 31337 book None"), fens);
    // The plain command line gives the same.
    let (ok, stdout, _) = nue(&["genfens", "24", "seed", "31337", "book", "None"]);
    assert!(ok);
    assert_eq!(stdout.lines().count(), 24);
    assert!(stdout.lines().zip(&fens).all(|(l, f)| l.ends_with(f.as_str())));
    let other = genfens("24 seed 31338 book None");
    assert_ne!(other, fens);
}

#[test]
fn book_positions_are_the_books() {
    let Some(book) = common::shared("books/UHO_4060_v4.epd") else { return };
    let text = std::fs::read_to_string(&book).unwrap();
    let in_book: HashSet<String> = text.lines().map(without_counters).collect();
    let fens = genfens(&format!("16 seed 5 book {}", book.display()));
    assert_eq!(fens.len(), 16);
    for fen in &fens {
        assert!(in_book.contains(&without_counters(fen)), "{fen} is not in the book");
    }
    // With random plies after the book position, the positions leave the book.
    let fens = genfens(&format!("16 seed 5 book {} plies=2", book.display()));
    assert!(fens.iter().all(|f| !in_book.contains(&without_counters(f))), "{fens:#?}");
}

#[test]
fn the_openings_are_those_datagen_plays_with_the_seed() {
    let dir = TempDir::new("genfens-datagen");
    let out = dir.join("games.chain.txt.gz");
    let out_arg = out.to_str().unwrap();
    let (ok, _, stderr) =
        nue(&["datagen", "--out", out_arg, "--games", "4", "--seed", "77", "--nodes", "500"]);
    assert!(ok, "datagen failed: {stderr}");
    let starts: Vec<String> = Lines::open(&out)
        .unwrap()
        .map(|line| Game::parse(&line).unwrap().start)
        .map(|start| Fen::from_position(&start, EnPassantMode::Legal).to_string())
        .collect();
    assert_eq!(starts.len(), 4);
    assert_eq!(genfens("4 seed 77 book None nodes=500"), starts);
}

#[test]
fn bad_arguments_are_answered() {
    for (args, answer) in [
        ("genfens seed 1 book None", "N must be a number, not 'seed'"),
        ("genfens x seed 1 book None", "N must be a number"),
        ("genfens 4 book None", "the seed is missing"),
        ("genfens 4 seed -1 book None", "the seed must be a number"),
        ("genfens 4 seed 1 book", "book needs a path"),
        ("genfens 4 seed 1 book None depth=3", "'depth' is not a genfens option"),
        ("genfens 4 seed 1 book None plies", "'plies' is not a genfens option"),
        ("genfens 4 seed 1 book /no/such/book.epd", "/no/such/book.epd"),
    ] {
        let (ok, stdout, stderr) = nue(&[args, "quit"]);
        assert!(!ok, "{args}: succeeded with {stdout}");
        assert!(stderr.contains(answer), "{args}: {stderr}");
    }
    // A book of three positions cannot give ten distinct ones without random plies.
    let dir = TempDir::new("genfens-small-book");
    let book = dir.join("three.epd");
    let text = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n\
                rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq -\n\
                rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq -\n";
    std::fs::write(&book, text).unwrap();
    let (ok, _, stderr) = nue(&[&format!("genfens 10 seed 1 book {}", book.display()), "quit"]);
    assert!(!ok && stderr.contains("only 3 distinct openings"), "{stderr}");
}
