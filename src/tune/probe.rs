//! What `nue tune` asks the engine it tunes before any game: its `bench` node count, which
//! changes when the search does, and its name and spin options, which show a tuning build
//! (`--features tune`) offering every tuned parameter with the table's range.

use std::{
    io::{Read, Write},
    path::Path,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use anyhow::{bail, ensure, Context, Result};

/// A spin option as the engine lists it after `uci`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpinOption {
    /// Its name.
    pub name: String,
    /// Its default value.
    pub default: i64,
    /// Smallest value.
    pub min: i64,
    /// Largest value.
    pub max: i64,
}

/// What the engine says of itself after `uci`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// Its `id name` (Nue's holds the version and the commit).
    pub name: String,
    /// Its spin options.
    pub spins: Vec<SpinOption>,
}

/// How long an engine may take to list its options.
const UCI_TIMEOUT: Duration = Duration::from_secs(30);

/// The engine's node count of `bench`, from its last line `<N> nodes <M> nps`.
pub fn bench(engine: &Path) -> Result<u64> {
    let out = Command::new(engine)
        .arg("bench")
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {} bench", engine.display()))?;
    ensure!(out.status.success(), "{} bench failed ({})", engine.display(), out.status);
    let text = String::from_utf8_lossy(&out.stdout);
    parse_bench(&text).with_context(|| format!("{} bench", engine.display()))
}

/// The node count of a bench's output.
pub fn parse_bench(text: &str) -> Result<u64> {
    let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
    match last.split_whitespace().collect::<Vec<_>>()[..] {
        [nodes, "nodes", _, "nps"] => {
            nodes.parse().with_context(|| format!("bad node count in {last:?}"))
        }
        _ => bail!("its last line is not `<N> nodes <M> nps`: {last:?}"),
    }
}

/// Starts the engine, sends `uci` and `quit`, and reads its name and spin options.
pub fn identify(engine: &Path) -> Result<Identity> {
    let mut child = Command::new(engine)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot start {}", engine.display()))?;
    let mut input = child.stdin.take().expect("piped stdin");
    // An engine that exits early closes the pipe: the wait below says what happened.
    let _ = input.write_all(b"uci\nquit\n");
    drop(input);
    let started = Instant::now();
    while child.try_wait()?.is_none() {
        if started.elapsed() > UCI_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            bail!("{} did not answer `uci` and `quit` within {UCI_TIMEOUT:?}", engine.display());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut text = String::new();
    child.stdout.take().expect("piped stdout").read_to_string(&mut text)?;
    let identity = parse_uci(&text);
    ensure!(
        text.lines().any(|l| l.trim() == "uciok"),
        "{} is not a UCI engine: no `uciok` after `uci`",
        engine.display()
    );
    Ok(identity)
}

/// The name and spin options in an engine's answer to `uci`.
pub fn parse_uci(text: &str) -> Identity {
    let mut identity = Identity { name: String::new(), spins: Vec::new() };
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("id name ") {
            identity.name = name.trim().to_string();
        }
        let Some(rest) = line.strip_prefix("option name ") else { continue };
        // Names may hold spaces ("Move Overhead"), so the name ends at " type ".
        let Some((name, rest)) = rest.split_once(" type ") else { continue };
        let words: Vec<&str> = rest.split_whitespace().collect();
        if let ["spin", "default", d, "min", a, "max", b] = words[..] {
            if let (Ok(default), Ok(min), Ok(max)) = (d.parse(), a.parse(), b.parse()) {
                identity.spins.push(SpinOption { name: name.to_string(), default, min, max });
            }
        }
    }
    identity
}

/// The commit in Nue's `id name` (`Nue 1.2.0-dev (24294a0)`), if it names one.
pub fn commit_of(name: &str) -> Option<&str> {
    let inside = name.rsplit_once('(')?.1.strip_suffix(')')?;
    (inside.len() >= 7 && inside.bytes().all(|b| b.is_ascii_hexdigit())).then_some(inside)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bench_count_is_read_from_the_last_line() {
        assert_eq!(
            parse_bench("Position 50/50: 1 nodes\n2240761 nodes 590526 nps\n").unwrap(),
            2_240_761
        );
        assert!(parse_bench("2240761 nodes\n").is_err());
        assert!(parse_bench("").is_err());
    }

    #[test]
    fn spin_options_and_the_name_are_read_from_the_uci_answer() {
        let text = "id name Nue 1.2.0-dev (24294a0)\n\
                    option name Move Overhead type spin default 30 min 0 max 5000\n\
                    option name Clear Hash type button\n\
                    option name rfp_margin type spin default 180 min 80 max 300\n\
                    uciok\n";
        let identity = parse_uci(text);
        assert_eq!(identity.name, "Nue 1.2.0-dev (24294a0)");
        assert_eq!(identity.spins.len(), 2);
        assert_eq!(identity.spins[0].name, "Move Overhead");
        assert_eq!(
            identity.spins[1],
            SpinOption { name: "rfp_margin".into(), default: 180, min: 80, max: 300 }
        );
        assert_eq!(commit_of(&identity.name), Some("24294a0"));
        assert_eq!(commit_of("Stockfish 12"), None);
    }
}
