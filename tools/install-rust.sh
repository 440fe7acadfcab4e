#!/bin/sh
# Installs Debian's Rust toolchain (rustc and cargo in /usr/bin), what builds the Rust sample
# (sample_bots/rust, referee/seats/runtimes.py), when it is missing; says so first. A rustup copy
# in a home folder (~/.cargo) does not count: no sandbox sees it. Called from the Makefile
# (`make bots`).
set -eu
exec "$(dirname "$0")/install-debian-packages.sh" "Rust bots (the Rust sample bot)" rustc cargo
