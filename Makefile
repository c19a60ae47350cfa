# The two commands of the README:
#   make demo   install dependencies, build, run tcprof on a bundled sample
#   make test   install dependencies, build, run every test through ctest
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
# Builds take a lock so that two builds never share the machine's two cores.
LOCK := flock $(BUILD_DIR)/.build.lock

.PHONY: all deps configure build test demo bench bench-table bench-train-table check-libtorch2 check-libtorch2-cuda clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD_DIR)/build.ninja:
	@mkdir -p $(BUILD_DIR)
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

configure: $(BUILD_DIR)/build.ninja

build: deps configure
	$(LOCK) cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	cd $(BUILD_DIR) && QT_QPA_PLATFORM=offscreen ctest --output-on-failure -j $(JOBS) --timeout 600

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

check-libtorch2:
	@bash scripts/check-libtorch2.sh $(BUILD_DIR)/libtorch2

check-libtorch2-cuda:
	@bash scripts/check-libtorch2.sh --cuda $(BUILD_DIR)/libtorch2-cuda

clean:
	rm -rf $(BUILD_DIR)
