#!/bin/sh
# Vendors gRPC-Go and protobuf-Go for a Go gRPC bot from Debian 12's packaged sources
# (/usr/share/gocode/src), offline: run in the bot's folder, after `go mod init`. It adds the
# modules to go.mod's requirements (at the versions Debian packages) and writes vendor/ with
# `go mod vendor`, from copies of Debian's modules whose go.mod lists no requirements (the
# graph is then these seven modules alone, none to download). go.mod and vendor/modules.txt
# name no folder outside the bot afterwards: `go build -mod=vendor` reads vendor/ only.
# Needs a Go 1.24 or later as `go` (or $GO) and Debian's packages listed below, among them
# golang-github-golang-protobuf-1-5-dev (for gRPC, apt would pick the 1-3 one, which panics).
set -eu
GO=${GO:-go}
SRC=/usr/share/gocode/src
[ -f go.mod ] || { echo "vendor-debian.sh: no go.mod here: run go mod init first" >&2; exit 1; }
case $("$GO" env GOVERSION 2>/dev/null) in
  go1.2[4-9]* | go1.[3-9][0-9]*) ;;
  *) echo "vendor-debian.sh: needs Go 1.24 or later as $GO (the arena's: docs/protocol.md)" >&2
     exit 1 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOFLAGS= GOPROXY=off GOTOOLCHAIN=local GOWORK=off
drops=""
while read -r path package; do
  if ! dpkg-query -W -f '${Status}' "$package" 2>/dev/null | grep -q 'ok installed' ||
     [ ! -f "$SRC/$path/go.mod" ]; then
    echo "vendor-debian.sh: $path needs Debian's $package: apt-get install $package" >&2
    exit 1
  fi
  # Debian's version as Go's: 1:0.7.0+dfsg-1 is v0.7.0, 0.0~git20200413.b5235f6-3 is
  # v0.0.0-20200413000000-b5235f6
  version=v$(dpkg-query -W -f '${Version}' "$package" | sed -E 's/^[0-9]+://; s/-[^-]*$//;
    s/\+.*$//; s/^0\.0~git([0-9]{8})\.([0-9a-f]+)$/0.0.0-\1000000-\2/')
  # the module's folders linked, its files copied (go mod vendor copies regular files only)
  mkdir -p "$tmp/$path"
  for entry in "$SRC/$path"/*; do
    if [ -d "$entry" ]; then ln -s "$entry" "$tmp/$path/"; else cp "$entry" "$tmp/$path/"; fi
  done
  grep -E '^(module|go) ' "$SRC/$path/go.mod" >"$tmp/$path/go.mod"
  "$GO" mod edit -require="$path@$version" -replace="$path=$tmp/$path"
  drops="$drops -dropreplace=$path"
done <<EOF
google.golang.org/grpc golang-google-grpc-dev
google.golang.org/protobuf golang-google-protobuf-dev
github.com/golang/protobuf golang-github-golang-protobuf-1-5-dev
google.golang.org/genproto golang-google-genproto-dev
golang.org/x/net golang-golang-x-net-dev
golang.org/x/sys golang-golang-x-sys-dev
golang.org/x/text golang-golang-x-text-dev
EOF
"$GO" mod vendor
# the copies go when the script ends: drop their replacements from go.mod and modules.txt
# shellcheck disable=SC2086  # one word per flag
"$GO" mod edit $drops
sed -i -E '/^# [^ ]+ => /d; s/^(# [^ ]+ [^ ]+) => .*/\1/' vendor/modules.txt
size=$(du -sh --apparent-size vendor | cut -f1)
echo "vendor-debian.sh: vendor/ holds $size of Debian's sources" >&2
