#!/bin/sh
# Installs the Debian packages a Go gRPC bot is made with, when one is missing; says so first:
# protoc and its Go plugins (the generated code) and the Go sources of gRPC and protobuf, which
# sample_bots/go-grpc/vendor-debian.sh vendors into a bot's folder (docs/protocol.md section
# 12). golang-github-golang-protobuf-1-5-dev is named: for gRPC, apt would pick the 1-3 one.
# Called from the Makefile (`make bots`, which the tests' `make test` runs).
set -eu
exec "$(dirname "$0")/install-debian-packages.sh" "Go gRPC bots (the Go gRPC sample)" \
  protobuf-compiler protoc-gen-go protoc-gen-go-grpc golang-google-grpc-dev \
  golang-github-golang-protobuf-1-5-dev golang-google-protobuf-dev golang-google-genproto-dev \
  golang-golang-x-net-dev golang-golang-x-sys-dev golang-golang-x-text-dev
