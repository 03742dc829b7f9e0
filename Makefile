# OpenBench-style build: `make EXE=<path>` builds a release binary at <path>.
# The binary is portable: the NNUE kernels pick AVX2 or scalar code at run time.

EXE ?= nue
CARGO ?= cargo

.PHONY: default test bench clean

default:
	$(CARGO) build --release --bin nue
	cp target/release/nue $(EXE)

test:
	.ci/run

bench: default
	./$(EXE) bench

clean:
	$(CARGO) clean
