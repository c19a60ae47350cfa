# The two commands of the README:
#   make demo   install dependencies, build, run tcprof on a bundled sample
#   make test   install dependencies, build, run every test through ctest
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
CMAKE ?= cmake
CTEST ?= $(patsubst %cmake,%ctest,$(CMAKE))
CMAKE_ARGS ?=
# A pip-installed PyTorch to build against instead of Debian's LibTorch (README, "Building against
# your PyTorch"): make test TORCH_PYTHON=/path/to/venv/bin/python. Its LibTorch is linked, its
# CUDA and CUPTI are used when that torch has CUDA, and it scripts the sample models.
TORCH_PYTHON ?=
ifneq ($(TORCH_PYTHON),)
TORCH_PREFIX = $(shell $(TORCH_PYTHON) -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)
TORCH_CMAKE_ARGS = -DCMAKE_PREFIX_PATH=$(TORCH_PREFIX) -DTCPROF_TORCH_PYTHON=$(TORCH_PYTHON)
DEPS_ARGS = --without-torch
endif
# ccache (CMake uses it when present) hits across checkouts in other folders and on the files that
# include a precompiled header.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true
export CCACHE_SLOPPINESS := pch_defines,time_macros,include_file_mtime,include_file_ctime
# The Debian build, two wheel builds and the sanitizer build hold about 6 GB of objects: at
# ccache's default 5 GB each evicted the others' and CI compiled everything every time.
export CCACHE_MAXSIZE ?= 12G
# Builds take a lock so that two builds never share the machine's two cores.
LOCK := flock $(BUILD_DIR)/.build.lock

.PHONY: all deps configure build test demo bench bench-table bench-train-table bench-inductor check-libtorch2 check-libtorch2-cuda compare-tlparse \
        check-torch-wheel check-sanitize check-sanitize-all fuzz package check-package clean

all: build

deps:
	@bash scripts/install-deps.sh $(DEPS_ARGS)

$(BUILD_DIR)/build.ninja:
	@if [ -n "$(TORCH_PYTHON)" ] && [ -z "$(TORCH_PREFIX)" ]; then \
	  echo "TORCH_PYTHON=$(TORCH_PYTHON) cannot import torch: install PyTorch there (pip install torch) or name another python" >&2; exit 2; fi
	@mkdir -p $(BUILD_DIR)
	$(CMAKE) -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(TORCH_CMAKE_ARGS) $(CMAKE_ARGS)

configure: $(BUILD_DIR)/build.ninja

build: deps configure
	$(LOCK) $(CMAKE) --build $(BUILD_DIR) -j $(JOBS)

test: build
	cd $(BUILD_DIR) && QT_QPA_PLATFORM=offscreen $(CTEST) --output-on-failure -j $(JOBS) --timeout 600

demo: build
	@bash scripts/demo.sh $(BUILD_DIR)

bench: build
	$(BUILD_DIR)/bench/store_bench

# Issue 16's speed table in docs/backend.md: tcprof bench on the GPT and every torchvision sample.
bench-table: build
	@bash scripts/bench-table.sh $(BUILD_DIR)

# Issue 17's training table in docs/backend.md: tcprof bench --train on the GPT and two CNNs.
bench-train-table: build
	@bash scripts/bench-train-table.sh $(BUILD_DIR)

# Issue 35's tables in docs/backend.md: tcprof built against a PyPI torch wheel beside torch.compile
# (Inductor, CPU) on the same models, at 1 and 2 threads and the training step.
bench-inductor:
	@bash scripts/bench-inductor.sh $(BUILD_DIR)/torch-wheel

check-libtorch2:
	@bash scripts/check-libtorch2.sh $(BUILD_DIR)/libtorch2

# tcprof import beside tlparse (PyPI) on every TORCH_TRACE fixture: the table in docs/import.md.
# Fails on a count the two disagree on without an explanation in scripts/compare_tlparse.py.
# TLPARSE=/path/to/tlparse compares with another build; by default the pinned one in the build's venv.
TLPARSE_VERSION := 0.4.3
compare-tlparse: build
	@tl="$(TLPARSE)"; if [ -z "$$tl" ]; then tl=$(BUILD_DIR)/tlparse-venv/bin/tlparse; \
	  "$$tl" --version 2>/dev/null | grep -qx "tlparse $(TLPARSE_VERSION)" || { rm -rf $(BUILD_DIR)/tlparse-venv && \
	    python3 -m venv $(BUILD_DIR)/tlparse-venv && \
	    $(BUILD_DIR)/tlparse-venv/bin/pip install -q "tlparse==$(TLPARSE_VERSION)"; }; fi; \
	python3 scripts/compare_tlparse.py --markdown --tcprof $(BUILD_DIR)/cli/tcprof --tlparse "$$tl" \
	  $(BUILD_DIR)/fixtures/torch_trace

check-libtorch2-cuda:
	@bash scripts/check-libtorch2.sh --cuda $(BUILD_DIR)/libtorch2-cuda

# The official LibTorch: PyPI's torch 2.11 and the newest release (TORCH_WHEEL_VERSIONS="2.11.0 newest"),
# each built with `make test TORCH_PYTHON=...` as a pip user builds it (scripts/check-torch-wheel.sh).
check-torch-wheel:
	@bash scripts/check-torch-wheel.sh $(BUILD_DIR)/torch-wheel

# AddressSanitizer, LeakSanitizer and UBSan (scripts/check-sanitize.sh): the libraries that load no
# LibTorch (CI), or everything (check-sanitize-all, before an issue touching compiler/ or cli/ ends).
check-sanitize: build
	@bash scripts/check-sanitize.sh $(BUILD_DIR)

check-sanitize-all: deps
	@bash scripts/check-sanitize.sh --all $(BUILD_DIR)

# libFuzzer over every input format (scripts/fuzz.sh): FUZZ_SECONDS per harness, FUZZ_HARNESSES
# to pick some (default all seven), FUZZ_JOBS at a time (default 1); findings land in
# tests/fuzzers/corpus/ as regression cases.
FUZZ_SECONDS ?= 60
fuzz:
	@FUZZ_JOBS=$(FUZZ_JOBS) bash scripts/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_HARNESSES)

# A .deb of this build (CPack; Debian's LibTorch) and its check in a fresh Debian 12 chroot.
package: build
	cd $(BUILD_DIR) && $(patsubst %cmake,%cpack,$(CMAKE)) -G DEB

check-package: package
	@bash scripts/check-package.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
