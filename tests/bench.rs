//! The bench node count is the search's fingerprint: OpenBench checks it, and any change
//! to the search, the move ordering or the default net moves it. This test pins it, so
//! that a change meant to leave the search alone (a refactor, the parameter table) is
//! seen to do so, and a change meant to alter it updates the number here deliberately,
//! in the same commit that states its SPRT result.

/// `nue bench` with the default depth and net: the last line's node count.
const BENCH_NODES: u64 = 2_501_189;

#[test]
fn the_bench_node_count_is_pinned() {
    let result = nue::bench::run(nue::bench::DEFAULT_DEPTH, false).unwrap();
    assert_eq!(
        result.nodes, BENCH_NODES,
        "the bench moved: if the search or the default net changed on purpose, update \
         BENCH_NODES in tests/bench.rs and say so in the commit"
    );
}

#[test]
fn the_bench_subcommand_ends_with_the_openbench_line() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_nue"))
        .args(["bench", "4"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let last = stdout.lines().last().unwrap();
    let words: Vec<&str> = last.split(' ').collect();
    assert_eq!(words.len(), 4, "{last}");
    assert_eq!((words[1], words[3]), ("nodes", "nps"), "{last}");
    let nodes: u64 = words[0].parse().unwrap();
    assert_eq!(nodes, nue::bench::run(4, false).unwrap().nodes, "{last}");
}
