# hogtrain — a plain Makefile. Quiet unless V=1.
#
#   make            library (static and shared), the hogtrain command, for
#                   this machine's CPU (-march=native)
#   make PORTABLE=1 the same for any x86-64-v2 CPU, the vector kernels
#                   picked at run time (src/core/isa.h); pip's build
#   make test       Criterion tests, then the Python package's (make deps
#                   first on a fresh machine)
#   make python     the Python package in build/python (PYTHONPATH=build/python)
#   make demo       generate data, train on all cores, print metrics
#   make bench      benchmarks (see docs/BENCHMARKS.md)
#   make tsan       threaded tests under ThreadSanitizer
#   make install    PREFIX=/usr/local DESTDIR=
#   make deps       install the Debian packages the build and tests need
#   make gpu-carry  the .debs and data a bare device machine needs, into
#                   .gpudeps/ and .gpudata/ (bench/device/, docs/GPU.md)

PREFIX  ?= /usr/local
DESTDIR ?=
BUILD   ?= build
CC      ?= cc
PORTABLE ?=
# PORTABLE=1: x86-64-v2 (SSE4.2, POPCNT: every x86-64 server since 2009;
# plain x86-64 would make rint() a libm call in the kernels' exp) plus the
# kernel files again for v3 and v4 (ISA_LEVELS below).
PORTABLE_MARCH := x86-64-v2
CFLAGS  ?= -O3 -march=$(if $(PORTABLE),$(PORTABLE_MARCH),native) -g
WERROR  ?= $(if $(CI),-Werror,)
NVCC    ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })

.DEFAULT_GOAL := all
SONAME_MAJOR := 0
# The one version: include/hogtrain.h's, which setup.py reads too.
VERSION      := $(shell sed -n 's/^\#define HOG_VERSION_STRING "\(.*\)"/\1/p' include/hogtrain.h)

PKGS     := hwloc liburing openblas libsodium zlib liblzma libzstd
TESTPKGS := criterion
DEB_PKGS := build-essential pkg-config xz-utils libhwloc-dev libudev-dev liburing-dev libopenblas-dev libsodium-dev \
            zlib1g-dev liblzma-dev libzstd-dev zstd \
            libcriterion-dev liblinear-tools python3-sklearn gnuplot-nox \
            python3-dev python3-numpy python3-scipy python3-pytest \
            python3-venv python3-pip python3-setuptools python3-wheel

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wno-unused-parameter $(WERROR)
# -fno-math-errno: sqrt sets no errno, so that loops of it run in vector
# lanes (the kernels' AdaGrad and FTRL steps); its results are IEEE's, the
# same bits either way.
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE -pthread -fPIC -MMD -MP $(WARN) \
              -fno-math-errno -Iinclude -Isrc $(CFLAGS) $(EXTRA_CFLAGS)
LIB_CFLAGS := -fvisibility=hidden

# ---- configuration ----------------------------------------------------------
# The packages' flags and the MPI check are computed once into
# $(BUILD)/config.mk (mk/config.sh), remade when the Makefile changes, when
# Debian's package database does (a package installed or removed) or by
# `make config`. Making it first installs what is missing (check-deps: make
# deps as root), and make rereads itself after remaking an included file:
# so the first build on a fresh machine links with the flags of the packages
# it has just installed, not with those pkg-config gave before they existed.
NOCONFIG_GOALS := clean clean-harden deps check-deps gpu-carry uninstall
NEED_PKGS ?= $(PKGS) $(if $(filter test tsan asan ubsan,$(MAKECMDGOALS)),$(TESTPKGS))
ifneq ($(filter-out $(NOCONFIG_GOALS),$(or $(MAKECMDGOALS),all)),)
include $(BUILD)/config.mk
endif
$(BUILD)/config.mk: Makefile mk/config.sh $(wildcard /var/lib/dpkg/status)
	@$(MAKE) --no-print-directory check-deps NEED_PKGS="$(NEED_PKGS)"
	@mkdir -p $(dir $@)
	$(Q)sh mk/config.sh "$(PKGS)" "$(MPICC)" "$(CC)" > $@.tmp && mv $@.tmp $@
.PHONY: config
config:
	@rm -f $(BUILD)/config.mk && $(MAKE) --no-print-directory $(BUILD)/config.mk

LDLIBS_ALL := $(PKG_LIBS) -lm -pthread
CFLAGS_PKG := $(PKG_CFLAGS)

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-6s %s\n' $(1) $(2)
endif

LIB_SRC  := $(sort $(filter-out src/cli/% src/gpu/%,$(wildcard src/*/*.c)))
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
TEST_SRC := $(sort $(wildcard tests/test_*.c)) tests/helpers.c tests/synth.c
BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

# GPU: the device backend is a plugin, $(BUILD)/libhogtrain-cuda.so (the
# .cu files and cuda_export.c, linked with cuSPARSE, cudart, libstdc++),
# built where nvcc is found and loaded on first use by src/gpu/cuda_plugin.c,
# which is always in the library: neither the library nor the command links
# CUDA (docs/GPU.md).
ifneq ($(strip $(NVCC)),)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
GPU_CU   := $(sort $(wildcard src/gpu/*.cu))
else
GPU_CU   :=
endif
CUDA_EXPORT := $(BUILD)/src/gpu/cuda_export.o
CUDA_PLUGIN := $(if $(GPU_CU),$(BUILD)/libhogtrain-cuda.so)
LIB_SRC += $(filter-out src/gpu/cuda_export.c,$(wildcard src/gpu/*.c))
# The loader remembers whether a plugin was built beside it, so that
# switching (make NVCC=, then make) recompiles it and relinks the library.
GPU_MODE  := $(BUILD)/gpu-mode
GPU_MODE_NOW := $(if $(GPU_CU),cuda,nocuda)
CUDA_DEFS := $(if $(GPU_CU),-DHOG_WITH_CUDA=1)

# ---- MPI (scale-out backend) ----------------------------------------------
# src/net/mpi.c where mpicc compiles and links a program with mpi.h
# (mk/config.sh; Debian: libopenmpi-dev), else the plain-C src/net/nompi.c
# that answers "built without MPI".
MPICC ?= $(shell command -v mpicc 2>/dev/null)
ifeq ($(HAVE_MPI),1)
LIB_SRC    := $(filter-out src/net/nompi.c,$(LIB_SRC))
LDLIBS_ALL += $(MPI_LIBS)
$(BUILD)/src/net/mpi.o: CFLAGS_PKG += $(MPI_CFLAGS)
else
LIB_SRC    := $(filter-out src/net/mpi.c,$(LIB_SRC))
endif
# ---- end MPI ----------------------------------------------------------------

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)

# ---- portable builds: the vector kernels once per x86-64 level -------------
# src/core/isa.h: the kernel files are compiled at the baseline as the v2
# copy and again as v3 and v4; core/isa.c binds the plain names at load
# time. The build's kind is remembered as GPU_MODE is, so that switching
# PORTABLE in one build folder recompiles everything.
KERNEL_SRC := src/core/sgd.c src/core/sgd_catchup.c
ISA_LEVELS := v3 v4
BUILD_MODE := $(BUILD)/build-mode
BUILD_MODE_NOW := $(if $(PORTABLE),portable,native) $(filter -march=%,$(CFLAGS))
ifneq ($(PORTABLE),)
ALL_CFLAGS += -DHOG_PORTABLE=1
$(KERNEL_SRC:%.c=$(BUILD)/%.o): CFLAGS_PKG += -DHOG_ISA=v2
ISA_OBJ := $(foreach l,$(ISA_LEVELS),$(KERNEL_SRC:%.c=$(BUILD)/%.$(l).o))
LIB_OBJ += $(ISA_OBJ)
define ISA_RULE
$$(BUILD)/src/%.$(1).o: src/%.c $$(BUILD_MODE)
	$$(call msg,CC,$$@)
	@mkdir -p $$(dir $$@)
	$$(Q)$$(CC) $$(ALL_CFLAGS) $$(LIB_CFLAGS) $$(CFLAGS_PKG) -march=x86-64-$(1) -DHOG_ISA=$(1) -c $$< -o $$@
endef
$(foreach l,$(ISA_LEVELS),$(eval $(call ISA_RULE,$(l))))
endif
$(BUILD)/src/core/isa.o: CFLAGS_PKG += -DHOG_BUILD_MARCH='"$(or $(patsubst -march=%,%,$(lastword $(filter -march=%,$(CFLAGS)))),default)"'
$(BUILD_MODE): FORCE
	@mkdir -p $(dir $@)
	@echo $(BUILD_MODE_NOW) | cmp -s - $@ 2>/dev/null || echo $(BUILD_MODE_NOW) > $@
GPU_CU_OBJ := $(GPU_CU:%.cu=$(BUILD)/%.cu.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
LDLIBS_ALL += -ldl

STATIC := $(BUILD)/libhogtrain.a
SHARED := $(BUILD)/libhogtrain.so.$(VERSION)
BIN    := $(BUILD)/hogtrain
TESTS  := $(BUILD)/hogtrain-tests

.PHONY: all test demo bench bench-progs tsan install uninstall deps check-deps gpu-carry clean FORCE \
        python python-test install-python
all: check-deps $(STATIC) $(SHARED) $(BIN) $(CUDA_PLUGIN)

# ---- dependencies --------------------------------------------------------
check-deps:
	@missing=""; for p in $(NEED_PKGS); do \
	  pkg-config --exists $$p 2>/dev/null || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "hogtrain: missing$$missing; running make deps"; $(MAKE) --no-print-directory deps || exit 1; \
	  else \
	    echo "hogtrain: missing$$missing. Install with:"; \
	    echo "  sudo apt-get update && sudo apt-get install -y $(DEB_PKGS)"; exit 1; \
	  fi; \
	fi

deps:
	@if [ "$$(id -u)" != 0 ]; then \
	  echo "run as root, or: sudo apt-get update && sudo apt-get install -y $(DEB_PKGS)"; exit 1; fi
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(DEB_PKGS)

# The device machine has none of DEB_PKGS and no network: bench/device/
# fetch.sh downloads what it needs here for the device tool to carry.
gpu-carry:
	sh bench/device/fetch.sh

# ---- library, command -----------------------------------------------------
$(BUILD)/src/cli/%.o: src/cli/%.c
	$(call msg,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(CFLAGS_PKG) -c $< -o $@

$(BUILD)/src/%.o: src/%.c
	$(call msg,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LIB_CFLAGS) $(CFLAGS_PKG) -c $< -o $@

$(BUILD)/src/%.cu.o: src/%.cu
	$(call msg,NVCC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(NVCC) -O3 -std=c++17 -lineinfo -MMD -MP -Iinclude -Isrc $(CFLAGS_PKG) \
	  -Xcompiler -fPIC,-fvisibility=hidden,-Wall $(if $(CI),-Werror all-warnings,) \
	  -gencode arch=compute_$(or $(CUDA_ARCH),90),code=sm_$(or $(CUDA_ARCH),90) \
	  -gencode arch=compute_$(or $(CUDA_ARCH),90),code=compute_$(or $(CUDA_ARCH),90) -c $< -o $@

# The plugin: what the .cu files need from the library (hog_errf, the shrink) comes
# from the archive as hidden copies; it exports its table only.
$(CUDA_PLUGIN): $(GPU_CU_OBJ) $(CUDA_EXPORT) $(STATIC)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -o $@ $(GPU_CU_OBJ) $(CUDA_EXPORT) $(STATIC) \
	  -Wl,--exclude-libs,ALL -Wl,-z,defs -L$(CUDA_HOME)/lib64 -lcusparse -lcudart \
	  -lstdc++ -Wl,-rpath,$(CUDA_HOME)/lib64 $(shell pkg-config --libs hwloc 2>/dev/null) -lm -pthread

$(GPU_MODE): FORCE
	@mkdir -p $(dir $@)
	@echo $(GPU_MODE_NOW) | cmp -s - $@ 2>/dev/null || echo $(GPU_MODE_NOW) > $@
$(BUILD)/src/gpu/cuda_plugin.o: $(GPU_MODE)
$(BUILD)/src/gpu/cuda_plugin.o: CFLAGS_PKG += $(CUDA_DEFS)

$(STATIC): $(LIB_OBJ) $(GPU_MODE)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $(LIB_OBJ)

# Exports hog_* only (mk/libhogtrain.map); the archive holds hog_* globals
# only by name (tests/test_abi.c checks both).
LIB_MAP := mk/libhogtrain.map
$(SHARED): $(LIB_OBJ) $(GPU_MODE) $(LIB_MAP)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,libhogtrain.so.$(SONAME_MAJOR) -Wl,--version-script,$(LIB_MAP) \
	  -o $@ $(LIB_OBJ) $(LDLIBS_ALL)
	$(Q)ln -sf libhogtrain.so.$(VERSION) $(BUILD)/libhogtrain.so.$(SONAME_MAJOR)
	$(Q)ln -sf libhogtrain.so.$(SONAME_MAJOR) $(BUILD)/libhogtrain.so

$(BIN): $(CLI_OBJ) $(STATIC)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJ) $(STATIC) $(LDLIBS_ALL)

# ---- tests ----------------------------------------------------------------
$(BUILD)/tests/%.o: tests/%.c
	$(call msg,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(CFLAGS_PKG) -Itests -c $< -o $@

# Plugin-loader fixtures (tests/plugin_fixture.c): a table of another ABI,
# and a library needing one that does not exist (as the plugin without CUDA).
PLUGIN_FIX := $(BUILD)/tests/plugin/other_abi.so $(BUILD)/tests/plugin/needs_absent.so
$(BUILD)/tests/plugin/other_abi.so: tests/plugin_fixture.c
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) -shared -fPIC -DFIXTURE_OTHER_ABI -o $@ $<
$(BUILD)/tests/plugin/needs_absent.so: tests/plugin_fixture.c
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) -shared -fPIC -DFIXTURE_ABSENT -o $(dir $@)libhog-absent.so $<
	$(Q)$(CC) -shared -fPIC -DFIXTURE_NEEDS_ABSENT -o $@ $< -L$(dir $@) -lhog-absent
	$(Q)rm -f $(dir $@)libhog-absent.so

$(TESTS): $(TEST_OBJ) $(STATIC) $(PLUGIN_FIX) $(CUDA_PLUGIN)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(TEST_OBJ) $(STATIC) -lcriterion $(LDLIBS_ALL)

HOGTRAIN_DATA ?= $(abspath ../shared/data)
TEST_ENV = HOGTRAIN_BIN=$(abspath $(BIN)) HOGTRAIN_DATA=$(HOGTRAIN_DATA) \
           HOGTRAIN_TEST_TMP=$(abspath $(BUILD))/testdata

# The C suite, then the Python package's tests (not with TEST_ARGS, which
# picks C tests; `make python-test` runs them alone) when $(PYTHON) has
# Python.h, numpy, scipy, scikit-learn and pytest. The Python suite runs
# even when the C suite failed (one run shows every failure); the target
# fails after both when either did.
test: check-deps $(BIN) $(SHARED) $(TESTS)
	@mkdir -p $(BUILD)/testdata
	$(info $(TEST_ENV) $(TESTS) $(TEST_ARGS))
	@c=0; $(TEST_ENV) $(TESTS) $(TEST_ARGS) || c=$$?; \
	p=0; if [ -n "$(TEST_ARGS)" ]; then :; \
	elif $(PY_READY); then $(MAKE) --no-print-directory python-test || p=$$?; \
	else echo "python tests: skipped: $(PYTHON) lacks Python.h, numpy, scipy, scikit-learn or pytest (make deps installs python3-dev python3-numpy python3-scipy python3-sklearn python3-pytest)"; fi; \
	[ $$c = 0 ] || echo "make test: the C suite failed (exit $$c)"; \
	[ $$p = 0 ] || echo "make test: the Python suite failed (exit $$p)"; \
	n=0; [ -c /dev/null ] || { n=1; echo "make test: /dev/null is no longer a character device: a test replaced it"; }; \
	[ $$c = 0 ] && [ $$p = 0 ] && [ $$n = 0 ]

# ---- Python package (python/; docs/PYTHON.md) --------------------------------
# build/python/hogtrain: the pure-Python modules beside the extension
# _hogtrain.so (python/hogtrain/_*.c, Python.h and the buffer
# protocol only, linked with the static library), importable by $(PYTHON)
# with PYTHONPATH=build/python. Debian's python3 by default: a python3
# first on PATH (pyenv, a venv) may lack Debian's numpy and scipy.
PYTHON     ?= $(or $(wildcard /usr/bin/python3),python3)
PY_INCLUDE  = $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
PY_VER      = $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PY_READY    = { [ -f "$(PY_INCLUDE)/Python.h" ] && $(PYTHON) -c 'import numpy, scipy, sklearn, pytest' 2>/dev/null; }
PY_DIR     := $(BUILD)/python/hogtrain
PY_SRC     := $(sort $(wildcard python/hogtrain/*.py))
PY_OUT     := $(PY_SRC:python/hogtrain/%=$(PY_DIR)/%) $(PY_DIR)/_hogtrain.so

python: $(PY_OUT)

$(PY_DIR)/%.py: python/hogtrain/%.py
	@mkdir -p $(dir $@)
	$(Q)cp $< $@

# The extension's files (python/hogtrain/_*.c, private header _hogtrain.h),
# hidden but for PyInit__hogtrain (PyMODINIT_FUNC exports it).
PY_CSRC    := $(sort $(wildcard python/hogtrain/*.c))
PY_OBJ     := $(PY_CSRC:python/hogtrain/%.c=$(BUILD)/python/%.o)

$(BUILD)/python/%.o: python/hogtrain/%.c
	$(call msg,CC,$<)
	@mkdir -p $(dir $@)
	@[ -f "$(PY_INCLUDE)/Python.h" ] || { echo "hogtrain: $(PYTHON) has no Python.h (install python3-dev; make deps)"; exit 1; }
	$(Q)$(CC) $(ALL_CFLAGS) -fvisibility=hidden -I$(PY_INCLUDE) -c $< -o $@

$(PY_DIR)/_hogtrain.so: $(PY_OBJ) $(STATIC)
	$(call msg,LD,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) -shared $(LDFLAGS) -o $@ $(PY_OBJ) $(STATIC) $(LDLIBS_ALL) -Wl,--exclude-libs,ALL

PYTEST_ARGS ?=
python-test: python $(BIN)
	@mkdir -p $(BUILD)/testdata
	PYTHONPATH=$(abspath $(BUILD))/python $(TEST_ENV) $(PYTHON) -m pytest -q -p no:cacheprovider python/tests $(PYTEST_ARGS)

# Criterion cannot start under ThreadSanitizer (its arena wants address
# space TSan reserves), so the threaded checks are plain programs
# (tests/tsan_*.c) and threaded runs of the command (tests/tsan.sh).
TSAN_SRC := $(sort $(wildcard tests/tsan_*.c))
$(BUILD)/tests/tsan_%: tests/tsan_%.c tests/synth.c $(STATIC)
	$(call msg,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(CFLAGS_PKG) -Itests $(LDFLAGS) -o $@ $< tests/synth.c $(STATIC) $(LDLIBS_ALL)

tsan:
	$(Q)$(MAKE) --no-print-directory BUILD=build-tsan CC=$(CC) NVCC= WERROR= \
	  CFLAGS="-O1 -g -fsanitize=thread" LDFLAGS="-fsanitize=thread" \
	  build-tsan/hogtrain $(TSAN_SRC:tests/%.c=build-tsan/tests/%)
	@mkdir -p build-tsan/testdata
	HOGTRAIN_DATA=$(HOGTRAIN_DATA) TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
	  sh tests/tsan.sh build-tsan $(TSAN_SRC:tests/%.c=%)

# ---- hardening: fuzzing and sanitizers (docs/RELIABILITY.md) --------------
#   make fuzz       libFuzzer harnesses fuzz/fuzz_*.c with ASan+UBSan (clang)
#   make fuzz-ci    replay the seed corpora, then fuzz each harness FUZZ_TIME s
#   make fuzz-run   the same with FUZZ_TIME=1800 (the long runs)
#   make asan       the whole Criterion suite under AddressSanitizer and
#                   UndefinedBehaviorSanitizer together (one build, one run: CI's)
#   make ubsan      the same under UndefinedBehaviorSanitizer alone (it also
#                   runs the few tests ASan's shadow memory makes skip)
FUZZ_CC   ?= clang
FUZZ_TIME ?= 60
FUZZ_JOBS ?= 2
FUZZ_SAN  := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_SRC  := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_BIN  := $(FUZZ_SRC:fuzz/%.c=build-fuzz/%)
DEB_PKGS  += clang libclang-rt-14-dev
.PHONY: fuzz fuzz-ci fuzz-run asan ubsan clean-harden

$(BUILD)/fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_common.h $(STATIC)
	$(call msg,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(CFLAGS_PKG) -fsanitize=fuzzer -o $@ $< $(STATIC) $(LDLIBS_ALL)

fuzz:
	$(Q)$(MAKE) --no-print-directory BUILD=build-fuzz CC=$(FUZZ_CC) WERROR= \
	  CFLAGS="-O1 -g -fno-omit-frame-pointer $(FUZZ_SAN) -fsanitize=fuzzer-no-link" \
	  $(FUZZ_SRC:fuzz/%.c=build-fuzz/fuzz/%)

fuzz-ci: fuzz
	sh fuzz/run.sh build-fuzz/fuzz $(FUZZ_TIME) $(FUZZ_JOBS) $(FUZZ_SRC:fuzz/%.c=%)

fuzz-run: fuzz
	sh fuzz/run.sh build-fuzz/fuzz $(if $(filter command line,$(origin FUZZ_TIME)),$(FUZZ_TIME),1800) \
	  $(FUZZ_JOBS) $(FUZZ_SRC:fuzz/%.c=%)

# Criterion runs under ASan as it is (it forks a child per test; LSan checks
# each child at its exit; tests/lsan.supp names the runner's own leak). The
# command the CLI tests spawn is the ASan one. The tests under mpirun
# (net/mpi_*) run in a second pass without leak checks: Open MPI's plugins
# leak at exit from code unloaded by then, which no suppression can name. No -Werror here: -O1 brings
# maybe-uninitialized false positives that -O3 does not.
SAN_ENV = HOGTRAIN_TEST_SANITIZER=1 ASAN_OPTIONS="abort_on_error=0:detect_leaks=1:halt_on_error=1:exitcode=66" \
          LSAN_OPTIONS="suppressions=$(abspath tests/lsan.supp)" \
          UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=66"
UBSAN_FLAGS := -fsanitize=undefined,float-cast-overflow \
               -fno-sanitize-recover=undefined,float-cast-overflow
ASAN_FLAGS  := -fsanitize=address $(UBSAN_FLAGS)
asan ubsan:
	$(Q)$(MAKE) --no-print-directory BUILD=build-$@ CC=$(CC) WERROR= NVCC= \
	  CFLAGS="-O1 -g -fno-omit-frame-pointer $(if $(filter asan,$@),$(ASAN_FLAGS),$(UBSAN_FLAGS))" \
	  LDFLAGS="$(if $(filter asan,$@),$(ASAN_FLAGS),$(UBSAN_FLAGS))" \
	  build-$@/hogtrain build-$@/hogtrain-tests build-$@/libhogtrain.so.$(VERSION)
	@mkdir -p build-$@/testdata
	$(SAN_ENV) HOGTRAIN_BIN=$(abspath build-$@/hogtrain) HOGTRAIN_DATA=$(HOGTRAIN_DATA) \
	  HOGTRAIN_TEST_TMP=$(abspath build-$@)/testdata build-$@/hogtrain-tests \
	  $(or $(TEST_ARGS),$(if $(filter asan,$@),--filter='!(net/mpi_*)'))
	$(if $(TEST_ARGS)$(filter ubsan,$@),,$(SAN_ENV) ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:exitcode=66" \
	  HOGTRAIN_BIN=$(abspath build-$@/hogtrain) HOGTRAIN_DATA=$(HOGTRAIN_DATA) \
	  HOGTRAIN_TEST_TMP=$(abspath build-$@)/testdata build-$@/hogtrain-tests --filter='net/mpi_*')

clean: clean-harden
clean-harden:
	rm -rf build-fuzz build-asan build-ubsan
# ---- end hardening ----------------------------------------------------------

# ---- demo, bench ----------------------------------------------------------
$(BUILD)/bench/%: bench/%.c $(STATIC)
	$(call msg,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(CFLAGS_PKG) $(LDFLAGS) -o $@ $< $(STATIC) $(LDLIBS_ALL)

bench-progs: $(BENCH_BIN)

demo: all
	@sh bench/demo.sh $(BIN)

bench: all bench-progs
	@HOGTRAIN_DATA=$(HOGTRAIN_DATA) sh bench/run_all.sh $(abspath $(BUILD))

# ---- install ----------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 $(STATIC) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHARED) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libhogtrain.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libhogtrain.so.$(SONAME_MAJOR)
	ln -sf libhogtrain.so.$(SONAME_MAJOR) $(DESTDIR)$(PREFIX)/lib/libhogtrain.so
	install -m 644 include/hogtrain.h include/hogtrain_model.h $(DESTDIR)$(PREFIX)/include/
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/
	$(if $(CUDA_PLUGIN),install -d $(DESTDIR)$(PREFIX)/lib/hogtrain)
	$(if $(CUDA_PLUGIN),install -m 755 $(CUDA_PLUGIN) $(DESTDIR)$(PREFIX)/lib/hogtrain/)
	install -m 644 docs/hogtrain.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' \
	  -e 's|@PRIVPKGS@|$(PKGS)|g' -e 's|@PRIVLIBS@|$(MPI_LIBS) -lm -pthread -ldl|g' \
	  hogtrain.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/hogtrain.pc
	@if [ -f "$(PY_INCLUDE)/Python.h" ]; then $(MAKE) --no-print-directory install-python; \
	else echo "hogtrain: the Python package is not installed: $(PYTHON) has no Python.h (python3-dev)"; fi

# Debian's python reads /usr/lib/python3/dist-packages and
# /usr/local/lib/python3.X/dist-packages; another PREFIX needs PYTHONPATH
# (or PYSITE=dir).
PYSITE ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(PY_VER)/dist-packages)
install-python: python
	install -d $(DESTDIR)$(PYSITE)/hogtrain
	install -m 644 $(PY_SRC:python/hogtrain/%=$(PY_DIR)/%) $(DESTDIR)$(PYSITE)/hogtrain/
	install -m 755 $(PY_DIR)/_hogtrain.so $(DESTDIR)$(PYSITE)/hogtrain/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/libhogtrain.* $(DESTDIR)$(PREFIX)/include/hogtrain.h $(DESTDIR)$(PREFIX)/include/hogtrain_model.h \
	  $(DESTDIR)$(PREFIX)/bin/hogtrain $(DESTDIR)$(PREFIX)/share/man/man1/hogtrain.1 \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig/hogtrain.pc \
	  $(DESTDIR)$(PREFIX)/lib/hogtrain/libhogtrain-cuda.so
	rm -rf $(DESTDIR)$(PYSITE)/hogtrain
	-rmdir $(DESTDIR)$(PREFIX)/lib/hogtrain 2>/dev/null

clean:
	rm -rf $(BUILD) build-tsan

$(LIB_OBJ) $(CLI_OBJ) $(PY_OBJ) $(TEST_OBJ): $(BUILD_MODE)

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(PY_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(CUDA_EXPORT:.o=.d) $(GPU_CU_OBJ:.o=.d)
