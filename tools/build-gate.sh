#!/bin/sh
# The seats' gate in C (referee/seats/gate.c) into build/gate/arena-gate-HASH, HASH the first 16
# hex digits of the source's SHA-256 (referee.seats.launch.native_gate_path): an edited source is
# never served by an older build. Without a C compiler nothing is built and the seats keep the
# Python gate. Run from the project's folder (make gate, the worker image).
set -e
hash=$(sha256sum referee/seats/gate.c | cut -c1-16)
out=build/gate/arena-gate-$hash
if [ -x "$out" ]; then
  exit 0
fi
cc=${CC:-cc}
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "gate: no C compiler here ($cc): the seats keep the Python gate"
  exit 0
fi
mkdir -p build/gate
"$cc" -O2 -Wall -Wextra -Werror -o "$out.tmp" referee/seats/gate.c
mv "$out.tmp" "$out"
echo "gate: built $out"
