#!/bin/sh
# Installs the Debian packages the C++ sample bot builds against, only when one is missing.
# Idempotent and silent when everything is already installed. Called from the project Makefile.
set -eu

PACKAGES="libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc pkg-config"

missing=""
for p in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing="$missing $p"
  fi
done

if [ -n "$missing" ]; then
  if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
  elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "install-deps.sh: missing Debian packages:$missing; run as root: apt-get install$missing" >&2
    exit 1
  fi
  echo "install-deps.sh: installing$missing" >&2
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  # shellcheck disable=SC2086  # word splitting of the package list is intended
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# The compiler and make are not installed here (a build machine has them); say so if absent.
for tool in g++ make; do
  command -v "$tool" >/dev/null 2>&1 || echo "install-deps.sh: '$tool' not found; install it with: apt-get install $tool" >&2
done
exit 0
