# OpenBench-style build: `make EXE=<path>` builds a release binary at <path>.
# The binary is portable: the NNUE kernels pick VNNI, AVX2 or scalar code at run time.
#
#   EVALFILE=<path>  embed that net instead of the default (OpenBench passes the net
#                    registered with a test this way)
#   TUNE=1           the tuning build: every search and time parameter a UCI option, as
#                    `nue spsa` lists them (also read from the environment; OpenBench
#                    reaches it through tune/Makefile, see docs/openbench.md)

EXE ?= nue
CARGO ?= cargo
EVALFILE ?=
TUNE ?=

ifneq ($(strip $(EVALFILE)),)
export NUE_NET := $(abspath $(EVALFILE))
endif
ifneq ($(strip $(TUNE)),)
FEATURES := --features tune
endif

.PHONY: default test bench clean

default:
	$(CARGO) build --release --bin nue $(FEATURES)
	cp $(or $(CARGO_TARGET_DIR),target)/release/nue $(EXE)

test:
	.ci/run

# abspath: EXE may be relative (run from here) or absolute.
bench: default
	$(abspath $(EXE)) bench

clean:
	$(CARGO) clean
