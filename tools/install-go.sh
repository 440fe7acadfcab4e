#!/bin/sh
# Installs Debian's Go toolchain (golang-go: go and gofmt under /usr/lib/go-*), what builds the Go
# sample (sample_bots/go, referee/seats/runtimes.py), when it is missing; says so first. Called
# from the Makefile (`make bots`).
set -eu
exec "$(dirname "$0")/install-debian-packages.sh" "Go bots (the Go sample bot)" golang-go
