//! The bench node count is the search's fingerprint: OpenBench checks it, and any change
//! to the search, the move ordering or the default net moves it. This test pins it, so
//! that a change meant to leave the search alone (a refactor, the parameter table) is
//! seen to do so, and a change meant to alter it updates the number here deliberately,
//! in the same commit that states its SPRT result.

/// `nue bench` with the default depth and net: the last line's node count.
const BENCH_NODES: u64 = 2_240_761;

#[test]
fn the_bench_node_count_is_pinned() {
    let result = nue::bench::run(nue::bench::DEFAULT_DEPTH, false).unwrap();
    assert_eq!(
        result.nodes, BENCH_NODES,
        "the bench moved: if the search or the default net changed on purpose, update \
         BENCH_NODES in tests/bench.rs and say so in the commit"
    );
}

/// Runs `nue bench 4` with `extra` arguments.
fn bench_4(extra: &[&std::ffi::OsStr]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_nue"))
        .args(["bench", "4"])
        .args(extra)
        .output()
        .unwrap()
}

/// The node count of a successful run's last line, which must be OpenBench's
/// `<nodes> nodes <nps> nps`.
fn openbench_nodes(out: &std::process::Output) -> u64 {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = std::str::from_utf8(&out.stdout).unwrap();
    let last = stdout.lines().last().unwrap_or_default();
    let words: Vec<&str> = last.split(' ').collect();
    assert_eq!(words.len(), 4, "{last}");
    assert_eq!((words[1], words[3]), ("nodes", "nps"), "{last}");
    words[0].parse().unwrap()
}

#[test]
fn the_bench_subcommand_ends_with_the_openbench_line() {
    let nodes = openbench_nodes(&bench_4(&[]));
    assert_eq!(nodes, nue::bench::run(4, false).unwrap().nodes);
}

/// Runs `nue bench 4 --net FILE`.
fn bench_with_net(net: &std::path::Path) -> std::process::Output {
    bench_4(&["--net".as_ref(), net.as_os_str()])
}

#[test]
fn bench_searches_with_the_net_it_is_given() {
    let dir = std::env::temp_dir().join(format!("nue-bench-net-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let default = nue::nnue::default_network();
    let same = dir.join("default.nnue");
    std::fs::write(&same, default.to_bytes()).unwrap();
    // Every evaluation 100 internal units higher: a net that searches differently.
    let other = dir.join("shifted.nnue");
    std::fs::write(&other, default.shifted(100).unwrap().to_bytes()).unwrap();

    let with_default = bench_with_net(&same);
    let with_other = bench_with_net(&other);
    let missing = bench_with_net(&dir.join("missing.nnue"));
    std::fs::remove_dir_all(&dir).unwrap();

    let pinned = nue::bench::run(4, false).unwrap().nodes;
    assert_eq!(openbench_nodes(&with_default), pinned, "the default net's file, loaded");
    assert_ne!(openbench_nodes(&with_other), pinned, "a different net must search differently");
    assert!(!missing.status.success());
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(err.contains("missing.nnue") && !err.contains("panicked"), "{err}");
}

/// `n` with a comma between each group of three digits, as the CHANGELOG writes counts.
fn with_commas(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The version names what the engine plays. A release version (no pre-release suffix)
/// is the CHANGELOG entry of that number, whose bench and default net are this build's:
/// once the search or the net changes, the version must move on to the next release's
/// pre-release (`1.2.0-dev`), so that two engines that play differently never answer to
/// one number (rating lists key on it).
#[test]
fn a_release_version_plays_as_its_changelog_entry_says() {
    let version = env!("CARGO_PKG_VERSION");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("CHANGELOG.md");
    let changelog = std::fs::read_to_string(path).unwrap();
    if version.contains('-') {
        assert!(changelog.contains("\n## Unreleased\n"), "a pre-release lists its changes");
        return;
    }
    let heading = format!("\n## {version}\n");
    let at = changelog.find(&heading).unwrap_or_else(|| panic!("CHANGELOG.md has no {heading}"));
    let entry = &changelog[at + heading.len()..];
    let entry = &entry[..entry.find("\n## ").unwrap_or(entry.len())];
    let bench = format!("- Bench: {}", with_commas(BENCH_NODES));
    let net = nue::nnue::default_net::NAME.trim_end_matches(".nnue");
    let moved = "the engine no longer plays as this release did: make the version the next \
                 release's pre-release (1.2.0-dev) in Cargo.toml";
    assert!(entry.contains(&bench), "{version}'s entry lacks '{bench}': {moved}");
    assert!(
        entry.contains(&format!("- Default net: `{net}`")),
        "{version}'s entry names another default net than {net}: {moved}"
    );
}

#[test]
fn counts_are_written_with_commas() {
    assert_eq!(with_commas(2_501_189), "2,501,189");
    assert_eq!(with_commas(999), "999");
    assert_eq!(with_commas(1_000), "1,000");
}
