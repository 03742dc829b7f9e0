#!/usr/bin/env bash
# A profile-guided build of Nue: the same engine, node for node, about 4 to 6 % faster
# (docs/performance.md). The compiler first builds an instrumented binary, which runs
# `nue bench` to record which branches go which way and which functions are hot; the
# second build lays the code out and inlines by that record. Stockfish's
# `make profile-build` does the same with its compilers.
#
#   tools/pgo-build.sh [OUT [CARGO_BUILD_ARGS...]]
#
# OUT defaults to target/pgo/nue. Further arguments go to both `cargo build`s, for
# instance `--features tune` for a tuning engine. The builds use their own folders under
# target/pgo, so the plain build is left alone. The profile is merged by llvm-profdata
# from rustup's llvm-tools component, which must match the compiler's LLVM: it is
# installed with `rustup component add llvm-tools` when missing. The script ends by
# checking that the new binary's bench node count equals the instrumented one's (the
# plain engine's): a different count would mean a different search, and fails.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/pgo/nue}
shift || true

host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
    echo "pgo-build: installing rustup's llvm-tools (llvm-profdata) for this toolchain" >&2
    rustup component add llvm-tools
fi

work=$PWD/target/pgo
rm -rf "$work/profiles"
mkdir -p "$work/profiles" "$(dirname "$out")"
bench_nodes() { "$1" bench 2>/dev/null | tail -1 | awk '{print $1}'; }

echo "pgo-build: the instrumented build" >&2
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$work/profiles" \
    cargo build --release --bin nue --target-dir "$work/generate" "$@"
echo "pgo-build: nue bench with the instrumented build, to record the profile" >&2
plain=$(bench_nodes "$work/generate/release/nue")
"$profdata" merge -o "$work/nue.profdata" "$work/profiles"

echo "pgo-build: the build that uses the profile" >&2
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$work/nue.profdata" \
    cargo build --release --bin nue --target-dir "$work/use" "$@"
guided=$(bench_nodes "$work/use/release/nue")
if [ -z "$plain" ] || [ "$plain" != "$guided" ]; then
    echo "pgo-build: bench node counts differ: ${plain:-none} instrumented, ${guided:-none} guided" >&2
    exit 1
fi
cp "$work/use/release/nue" "$out"
echo "pgo-build: $out (bench $guided nodes, as the plain build)" >&2
