//! Perft suites: leaf counts of the legal move tree from standard and Chess960 positions,
//! compared with published values (`tests/perft/*.epd`, lines `<fen> ;D<depth> <count> ...`).
//! Depths whose count exceeds a node cap are skipped, so the suite stays fast in CI; the
//! full counts run with `NUE_PERFT_CAP=<nodes> cargo test --release --test perft`.

use shakmaty::{fen::Fen, CastlingMode, Chess};

fn cap() -> u64 {
    std::env::var("NUE_PERFT_CAP").ok().and_then(|v| v.parse().ok()).unwrap_or(30_000_000)
}

fn run_suite(file: &str, mode: CastlingMode) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/perft").join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut checked = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut fields = line.split(';');
        let fen = fields.next().unwrap().trim();
        let pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(mode)
            .unwrap_or_else(|e| panic!("{fen}: {e}"));
        for field in fields {
            let (depth, count) = field.trim().split_once(' ').unwrap();
            let depth: u32 = depth.trim_start_matches('D').parse().unwrap();
            let count: u64 = count.parse().unwrap();
            if count > cap() {
                continue;
            }
            assert_eq!(nue::perft::perft(&pos, depth), count, "{fen} at depth {depth}");
            checked += 1;
        }
        // Divide adds up to the total.
        let divided: u64 = nue::perft::divide(&pos, 3).iter().map(|&(_, n)| n).sum();
        assert_eq!(divided, nue::perft::perft(&pos, 3));
    }
    assert!(checked >= 30, "only {checked} counts checked in {file}");
}

#[test]
fn standard_positions() {
    run_suite("standard.epd", CastlingMode::Standard);
}

#[test]
fn chess960_positions() {
    run_suite("chess960.epd", CastlingMode::Chess960);
}

/// `nue perft 5 | head -1`: when the reader closes the pipe, the command ends quietly and
/// successfully instead of panicking on the failed write. The pipe is closed before the
/// count (tens of milliseconds at least) is done.
#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_nue"))
        .args(["perft", "5"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(stderr.is_empty(), "{stderr}");
}
