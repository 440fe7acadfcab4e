#!/bin/sh
# Installs bubblewrap (bwrap), the sandbox every bot runs in, when it is missing; prlimit and
# setpriv come with util-linux. Called from the Makefile; without it, play with --unsandboxed.
set -eu
if command -v bwrap >/dev/null 2>&1 && command -v prlimit >/dev/null 2>&1 &&
   command -v setpriv >/dev/null 2>&1; then
  exit 0
fi
exec "$(dirname "$0")/install-debian-packages.sh" "the bots' sandbox (or play --unsandboxed)" \
  bubblewrap util-linux
