# vitpipe - small Unix filters for Vision Transformer position-encoding research.
#
#   make              build every command into bin/
#   make test         install missing Debian packages (as root), build, run all tests
#   make test SAN=1   the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make test PORTABLE=1   the same, built without -march=native
#   make CC=clang     build with clang (GCC is the reference compiler)
#   make syntax CC=clang   that compiler's warnings over lib/ and cmd/, no build
#   make fuzz         each reader's fuzz harness (tests/fuzz), FUZZ_SECONDS each
#   make demo         train and evaluate a small model on Fashion-MNIST
#   make bench        benchmarks that print figures (not part of the tests)
#   make test-slow    tests too slow for make test (tests/slow: MPI's network
#                     faults on emulated hosts, as root)
#   make mpi-bench    vit-train(1)'s communication model against emulated
#                     hosts with shaped links (as root; a few minutes)
#   make install PREFIX=/usr/local   binaries, man pages, bash and zsh completion;
#                                     make uninstall
#   make clean

VERSION	= 0.1.0
PREFIX	?= /usr/local
BINDIR	= $(PREFIX)/bin
MANDIR	= $(PREFIX)/share/man
BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR = $(PREFIX)/share/zsh/site-functions

PKGS	= libpng libjpeg libavformat libavcodec libavutil libswscale openblas zlib
# vit-train alone links MPI (Open MPI's C bindings): the other commands
# need not load it.
MPIPKG	= ompi-c
# Debian packages: to build, and what the tests and the demo use besides.
DEBS_BUILD = gcc make pkg-config libpng-dev libjpeg-dev libavformat-dev \
	libavcodec-dev libavutil-dev libswscale-dev libopenblas-dev zlib1g-dev \
	libopenmpi-dev libdnnl-dev
DEBS_TEST  = python3 python3-numpy python3-pil imagemagick ffmpeg dataset-fashion-mnist mandoc clang zsh \
	gnuplot-nox openmpi-bin iproute2
DEBS_BENCH = python3-torch

CC	?= cc
# The host's instructions, but GCC's generic scheduling: with -march=native
# alone GCC 12 tunes a Zen 4 as a Zen 3, whose cost model takes a memory
# operand as free, and the exponentials' register kernels reloaded their
# operands in every FMA (doc/performance.md).
OPT	?= -O2 -march=native -mtune=generic
WARN	= -Wall -Wextra -Werror -Wno-unused-parameter -Wvla
# lib/ in layers, lowest first: a folder includes only its own headers and
# those of the folders before it (tests/sh/layers.sh checks it).
LIBDIRS	= base io data math nn pe model cli
# -fno-trapping-math: nothing here traps on floating-point exceptions, and
# with the default GCC will not turn a loop's compares into selects (the
# clamps and NaN checks of fastmath.h), so GELU's and softmax's loops
# stayed scalar.  Values are unchanged: it reorders no arithmetic.
# -fno-math-errno: nothing reads errno after a math function, and with
# the default each sqrtf is a call on its error path, so AdamW's loop
# stayed scalar.  sqrt is exact either way.
CFLAGS	+= -std=c11 -D_GNU_SOURCE -DVITPIPE_VERSION='"$(VERSION)"' -fopenmp \
	-fno-trapping-math -fno-math-errno $(OPT) -g $(WARN) $(LIBDIRS:%=-Ilib/%)
# oneDNN (libdnnl-dev) has no pkg-config file.
LDLIBS	+= -ldnnl -lm

ifeq ($(SAN),1)
BUILD	= build/san
BIN	= build/san/bin
CFLAGS	+= -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
LDFLAGS	+= -fsanitize=address,undefined
else ifeq ($(PORTABLE),1)
# make test PORTABLE=1: the same tests on a build for any x86-64, without
# the host's vector instructions (lib/base/arch.h: the kernels' results do
# not depend on AVX-512 or AVX2).
OPT	= -O2
BUILD	= build/portable
BIN	= build/portable/bin
else ifeq ($(FUZZ),1)
# make fuzz's build: the library for libFuzzer, under ASan and UBSan.
CC	= clang
BUILD	= build/fuzz
BIN	= build/fuzz/bin
CFLAGS	+= -fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
LDFLAGS	+= -fsanitize=address,undefined
else
BUILD	= build/rel
BIN	= bin
endif

# clang (make CC=clang): GCC's optimize pragmas are GCC's alone, and a
# vectorization hint it does not follow is no error, nor is the ABI note
# on 64-byte vectors passed between static functions (GCC notes it too).
ifneq ($(findstring clang,$(shell $(CC) --version 2>/dev/null)),)
WARN	+= -Wno-unknown-pragmas -Wno-pass-failed -Wno-psabi
endif

# pkg-config is asked only when a build needs it, so 'make deps' runs first.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) $(MPIPKG) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
MPI_LIBS   = $(shell pkg-config --libs $(MPIPKG) 2>/dev/null)

LIBSRC	= $(sort $(foreach d,$(LIBDIRS),$(wildcard lib/$(d)/*.c)))
LIBOBJ	= $(LIBSRC:lib/%.c=$(BUILD)/lib/%.o)
LIBA	= $(BUILD)/libvitpipe.a
CMDS	= $(sort $(basename $(notdir $(wildcard cmd/*.c))))
PROGS	= $(CMDS:%=$(BIN)/%)
UNITSRC	= $(sort $(wildcard tests/unit/*.c))
UNITS	= $(UNITSRC:tests/unit/%.c=$(BUILD)/tests/%)
FUZZERS	= $(sort $(basename $(notdir $(wildcard tests/fuzz/fuzz_*.c))))
REPLAYS	= $(FUZZERS:%=$(BUILD)/fuzz/replay_%)
BENCHSRC = $(sort $(wildcard tests/bench/*.c))
BENCHES	= $(BENCHSRC:tests/bench/%.c=$(BUILD)/bench/%)
MAN1	= $(wildcard man/man1/*.1)
MAN5	= $(wildcard man/man5/*.5)
MAN7	= $(wildcard man/man7/*.7)

all: $(PROGS)

# A checksum of the flags the build was made with, in $(BUILD)/flags,
# rewritten only when they change (this Makefile's, or CC, OPT, ... on the
# command line): everything built depends on it, so new flags rebuild all,
# as new sources would.
FLAGSUM	:= $(shell printf '%s' '$(subst ','"'"',$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) $(LDLIBS))' | cksum)
$(BUILD)/flags: FORCE
	@mkdir -p $(@D)
	@echo '$(FLAGSUM)' | cmp -s - $@ || echo '$(FLAGSUM)' > $@
FORCE:

$(BUILD)/lib/%.o: lib/%.c lib/*/*.h $(BUILD)/flags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

$(LIBA): $(LIBOBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN)/%: cmd/%.c $(LIBA) $(BUILD)/flags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $< $(LIBA) $(PKG_LIBS) $(LDLIBS)

$(BIN)/vit-train: LDLIBS += $(MPI_LIBS)

$(BUILD)/tests/%: tests/unit/%.c tests/unit/*.h $(LIBA) $(BUILD)/flags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< $(LIBA) $(PKG_LIBS) $(LDLIBS)

$(BUILD)/bench/%: tests/bench/%.c $(LIBA) $(BUILD)/flags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $< $(LIBA) $(PKG_LIBS) $(LDLIBS)

# Install what is missing (as root), or say what to run.
deps:
	@need=""; \
	pkg-config --exists $(PKGS) $(MPIPKG) 2>/dev/null && [ -f /usr/include/oneapi/dnnl/dnnl.h ] || need="$(DEBS_BUILD)"; \
	command -v ffmpeg >/dev/null && command -v mpirun >/dev/null && command -v mandoc >/dev/null && command -v convert >/dev/null && command -v gnuplot >/dev/null && command -v zsh >/dev/null && { [ -x /sbin/tc ] || [ -x /usr/sbin/tc ]; } && /usr/bin/python3 -c 'import numpy, PIL' 2>/dev/null \
	  && [ -d /usr/share/datasets/fashion-mnist ] || need="$$need $(DEBS_TEST)"; \
	if [ -n "$$need" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "vitpipe: installing Debian packages:$$need"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$need >/dev/null || exit 1; \
	  else \
	    echo "vitpipe: missing packages; run as root: apt-get update && apt-get install $$need" >&2; exit 1; \
	  fi; \
	fi

# A fuzz harness with replay.c's main: its corpora replayed in make test.
$(BUILD)/fuzz/replay_%: tests/fuzz/%.c tests/fuzz/replay.c tests/fuzz/fuzz.h $(LIBA) $(BUILD)/flags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -Itests/fuzz $(LDFLAGS) -o $@ $< tests/fuzz/replay.c $(LIBA) $(PKG_LIBS) $(LDLIBS)

# A fuzz harness with libFuzzer's main (FUZZ=1 builds).
$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(LIBA) $(BUILD)/flags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -Itests/fuzz -fsanitize=fuzzer,address,undefined -o $@ $< $(LIBA) $(PKG_LIBS) $(LDLIBS)

# The compiler's errors and warnings over lib/ and cmd/, nothing built: a
# few seconds.  make test runs it with clang (tests/sh/clang_syntax.sh),
# so that code GCC passes but clang refuses cannot break make fuzz.
syntax:
	@printf '%s\n' $(LIBSRC) cmd/*.c | xargs -P2 -n8 $(CC) -fsyntax-only $(CFLAGS) $(PKG_CFLAGS)

# The benchmarks are built (not run) too, so that a change that breaks one
# fails the tests rather than the next make bench.
build-all: $(PROGS) $(UNITS) $(BENCHES) $(REPLAYS)

test: deps
	@$(MAKE) --no-print-directory -j$$(nproc) build-all
	@BIN=$(BIN) BUILD=$(BUILD) sh tests/run.sh

test-slow: deps
	@$(MAKE) --no-print-directory $(PROGS)
	@BIN=$(BIN) BUILD=$(BUILD) SUITES=tests/slow sh tests/run.sh

mpi-bench: deps
	@$(MAKE) -s --no-print-directory $(PROGS)
	@sh experiments/mpi_model.sh

# The benchmarks measure PyTorch side by side.
bench: deps
	@/usr/bin/python3 -c 'import torch' 2>/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then echo "vitpipe: installing Debian packages: $(DEBS_BENCH)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEBS_BENCH) >/dev/null || exit 1; \
	  else echo "vitpipe: missing packages; run as root: apt-get install $(DEBS_BENCH)" >&2; exit 1; fi; }
	@$(MAKE) -s --no-print-directory $(PROGS) $(BENCHES)
	@BIN=$(BIN) BUILD=$(BUILD) sh tests/bench/run.sh

# Each reader's harness under libFuzzer for FUZZ_SECONDS, from the seed and
# regression corpora; new inputs go to build/fuzz/corpus, findings to
# build/fuzz/NAME-crash-... (add them to tests/fuzz/regress/NAME).  Single
# allocations up to a record's 4 GiB (vitpipe(5)) are the readers' right:
# -malloc_limit_mb lets them through, -rss_limit_mb still bounds use.
FUZZ_SECONDS ?= 60
fuzz: deps
	@$(MAKE) --no-print-directory FUZZ=1 $(FUZZERS:%=build/fuzz/fuzz/%)
	@for f in $(FUZZERS); do mkdir -p build/fuzz/corpus/$$f; \
	  echo "fuzz: $$f for $(FUZZ_SECONDS) s"; \
	  build/fuzz/fuzz/$$f -max_total_time=$(FUZZ_SECONDS) -timeout=2 -rss_limit_mb=2048 -malloc_limit_mb=4400 \
	    -artifact_prefix=build/fuzz/$$f- build/fuzz/corpus/$$f \
	    $$(ls -d tests/fuzz/corpus/$$f tests/fuzz/regress/$$f 2>/dev/null) || exit 1; \
	done

demo: deps
	@$(MAKE) -s --no-print-directory all
	@BIN=$(BIN) sh data/demo.sh

# Shell completion, made from the commands' own --help (completion/gen.sh).
$(BUILD)/completion/vitpipe.bash $(BUILD)/completion/_vitpipe: $(PROGS) completion/gen.sh
	@mkdir -p $(@D)
	sh completion/gen.sh bash $(BIN) > $(BUILD)/completion/vitpipe.bash
	sh completion/gen.sh zsh $(BIN) > $(BUILD)/completion/_vitpipe

# bash-completion loads a command's file by its name: one file, a link
# for each command.
install: $(PROGS) $(BUILD)/completion/vitpipe.bash $(BUILD)/completion/_vitpipe
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 \
	  $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	for f in $(PROGS); do install -m 755 $$f $(DESTDIR)$(BINDIR) || exit 1; done
	for f in $(MAN1) $(MAN5) $(MAN7); do \
	  install -m 644 $$f $(DESTDIR)$(MANDIR)/$$(basename $$(dirname $$f)) || exit 1; done
	install -m 644 $(BUILD)/completion/vitpipe.bash $(DESTDIR)$(BASHCOMPDIR)/vitpipe
	for c in $(CMDS); do ln -sf vitpipe $(DESTDIR)$(BASHCOMPDIR)/$$c || exit 1; done
	install -m 644 $(BUILD)/completion/_vitpipe $(DESTDIR)$(ZSHCOMPDIR)/_vitpipe

uninstall:
	rm -f $(CMDS:%=$(DESTDIR)$(BINDIR)/%)
	rm -f $(MAN1:man/%=$(DESTDIR)$(MANDIR)/%) $(MAN5:man/%=$(DESTDIR)$(MANDIR)/%) $(MAN7:man/%=$(DESTDIR)$(MANDIR)/%)
	rm -f $(DESTDIR)$(BASHCOMPDIR)/vitpipe $(CMDS:%=$(DESTDIR)$(BASHCOMPDIR)/%) $(DESTDIR)$(ZSHCOMPDIR)/_vitpipe

clean:
	rm -rf bin build

.PHONY: all deps syntax build-all test test-slow mpi-bench bench fuzz demo install uninstall clean FORCE
.SECONDARY:
