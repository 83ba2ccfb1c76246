# Thin front door in front of CMake. See README.md.
BUILD      ?= build
JOBS       ?= $(shell nproc)
BUILD_TYPE ?= Release
FUZZ_SECONDS ?= 10
CMAKE_FLAGS ?=

.PHONY: all deps configure build test demo sanitize-configure sanitize fuzz bench mutate format lint lint-changed clean

all: build

deps:
	@scripts/install-deps.sh --check 2>/dev/null || scripts/install-deps.sh

# Ninja (a fresh build folder only): it compiles a target's sources while the
# libraries it links are still being built, where make waits for them.
GENERATOR  ?= $(if $(shell command -v ninja 2>/dev/null),-G Ninja)

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DLOSSLESS_WERROR=ON $(CMAKE_FLAGS)

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)

# The main job: the fabric comparison on its built-in default (docs/compare.md).
demo: build
	$(BUILD)/lossless compare -o lossless-report
	@echo "open $(CURDIR)/lossless-report/report.html"

# The sanitizer build (build-sanitize): clang, -O1 with line tables only (asserts stay on), ASan +
# UBSan: a second compiler beside make test's GCC, about half of GCC's compile time at -g for this
# tree, and the tier runs several times faster than at -O0. Warnings are not errors here: make
# test's Release build already fails on any warning. The libFuzzer targets are built in the same
# folder (LOSSLESS_FUZZ), so make test's fuzz stage and make sanitize compile each library once.
sanitize-configure: deps
	cmake -S . -B build-sanitize $(if $(wildcard build-sanitize/CMakeCache.txt),,$(GENERATOR)) \
	  -DCMAKE_BUILD_TYPE=Debug -DLOSSLESS_WERROR=OFF -DLOSSLESS_SANITIZE=ON -DLOSSLESS_FUZZ=ON \
	  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang '-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only'

sanitize: sanitize-configure
	cmake --build build-sanitize -j $(JOBS)
	cd build-sanitize && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -LE slow

# Coverage-guided fuzzing of every parser with clang's libFuzzer, FUZZ_SECONDS each, JOBS at a
# time, in the sanitizer build: -O1 with line tables (the flags OSS-Fuzz builds its fuzzers
# with), asserts on, ASan + UBSan, every UBSan report fatal.
fuzz: sanitize-configure
	cmake --build build-sanitize -j $(JOBS) --target fuzzers
	scripts/run-fuzzers.sh build-sanitize $(FUZZ_SECONDS) $(JOBS)

# Mutation check of the fast test tier (tests/mutants/, docs/testing.md): 5 min with a
# warm ccache, up to an hour from a cold one on 2 cores.
mutate: deps
	scripts/mutate.py $(if $(MUTANTS),--only '$(MUTANTS)')

bench: build
	$(BUILD)/lossless bench ls-ring --hosts 64 --bytes 64MiB --vs-ns3 $(if $(ANCHORS),--anchors '$(ANCHORS)')

format:
	find src tests bench -name '*.cpp' -o -name '*.hpp' | xargs clang-format -i

# clang-tidy with the root .clang-tidy over every translation unit under src/ (headers
# under src/ through HeaderFilterRegex); any finding fails. Not part of `make test`.
# Its own build folder, configured only (compile_commands.json). LINT_FILES narrows the
# run to a regex of paths, e.g. make lint LINT_FILES='src/(base|units)/'.
LINT_BUILD ?= build-lint
LINT_FILES ?= $(CURDIR)/src/
CLANG_TIDY ?= $(firstword $(shell command -v clang-tidy-14 clang-tidy 2>/dev/null))
RUN_CLANG_TIDY ?= $(firstword $(shell command -v run-clang-tidy-14 run-clang-tidy 2>/dev/null))
lint: deps
	cmake -S . -B $(LINT_BUILD) -DCMAKE_BUILD_TYPE=Debug -DLOSSLESS_LTO=OFF \
	  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON $(CMAKE_FLAGS) >/dev/null
	@test -n "$(CLANG_TIDY)" || { echo "lint: clang-tidy not found (scripts/install-deps.sh)" >&2; exit 2; }
	@test -n "$(RUN_CLANG_TIDY)" || { echo "lint: run-clang-tidy not found" >&2; exit 2; }
	$(RUN_CLANG_TIDY) -clang-tidy-binary $(CLANG_TIDY) -p $(LINT_BUILD) -j $(JOBS) -quiet \
	  '$(LINT_FILES)'

# `make lint` over only the sources changed since BASE (docs/testing.md "Lint").
BASE ?= main
lint-changed:
	@files=$$(scripts/lint-changed-files.sh '$(BASE)' '$(CURDIR)') || exit $$?; \
	if [ -z "$$files" ]; then echo "lint-changed: no linted source under src/ changed since $(BASE)"; \
	else echo "lint-changed: $$files"; $(MAKE) --no-print-directory lint LINT_FILES="$$files"; fi

clean:
	rm -rf $(BUILD) build-asan build-sanitize build-fuzz build-mutate build-lint
