#!/bin/sh
# Installs the Debian packages the C++ sample bot builds against, only when one is missing.
# Idempotent and silent when everything is already installed. Called from the project Makefile.
set -eu

"$(dirname "$0")/../../tools/install-debian-packages.sh" "the C++ sample bot" \
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc pkg-config

# The compiler and make are not installed here (a build machine has them); say so if absent.
for tool in g++ make; do
  command -v "$tool" >/dev/null 2>&1 || echo "install-deps.sh: '$tool' not found; install it with: apt-get install $tool" >&2
done
exit 0
