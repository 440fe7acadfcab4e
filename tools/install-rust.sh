#!/bin/sh
# Installs the Rust that builds Rust bots (rustc and cargo in /usr/bin; referee/seats/runtimes.py:
# MIN_RUST, 1.85, which reads a version-4 Cargo.lock and edition 2024) when it is missing or
# older: Debian 12's rustc-web and cargo-web (1.96 from bookworm-security, made for programs
# that need a current Rust; they replace its rustc 1.63), or Debian 13's rustc and cargo (1.85).
# A rustup copy in a home folder (~/.cargo) does not count: no sandbox sees it. Says what it does
# first. Called from the Makefile (`make bots`) and the worker image.
set -eu
tools="$(dirname "$0")"
ok() {
  v="$(/usr/bin/rustc --version 2>/dev/null | sed -n 's/^rustc \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')"
  [ -n "$v" ] && [ -x /usr/bin/cargo ] && set -- $v && { [ "$1" -gt 1 ] || [ "$2" -ge 85 ]; }
}
ok && exit 0
if apt-cache show rustc-web >/dev/null 2>&1; then
  "$tools/install-debian-packages.sh" "Rust bots (Rust 1.85 or later)" rustc-web cargo-web
else
  "$tools/install-debian-packages.sh" "Rust bots (Rust 1.85 or later)" rustc cargo
fi
ok || { echo "install: Rust bots need rustc 1.85 or later in /usr/bin; this system's is" \
             "$(/usr/bin/rustc --version 2>/dev/null || echo missing)" >&2; exit 1; }
