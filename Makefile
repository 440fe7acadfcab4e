# Shengji Arena: `make demo` and `make test` do all set-up on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test install bench clean redis

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# Redis for the tests that need it: start one on 127.0.0.1:6379 unless one answers already.
redis:
	@if command -v redis-cli >/dev/null 2>&1 && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then \
	  echo "redis: running"; \
	elif command -v redis-server >/dev/null 2>&1; then \
	  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no && echo "redis: started"; \
	else \
	  echo "redis: not installed (the tests that need it will say so)"; \
	fi

demo: $(STAMP)
	$(BIN)/arena demo

test: $(STAMP) redis
	$(BIN)/python -m pytest

bench: $(STAMP)
	for v in two-deck-80 two-deck-fry single-deck three-deck; do $(BIN)/arena bench engine --variant $$v; done

clean:
	rm -rf $(VENV) build *.egg-info
