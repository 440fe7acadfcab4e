#!/bin/sh
# Installs the Debian packages named after WHAT (what they are for) that are missing, saying so
# before it does; idempotent and silent when all are installed. Used by the Makefile's steps.
#   tools/install-debian-packages.sh WHAT PACKAGE...
set -eu

what="$1"
shift
missing=""
for p in "$@"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install: $what needs$missing, and this is not a Debian-like system: install them" \
       "with its package manager" >&2
  exit 1
fi
. "$(dirname "$0")/root-or-sudo.sh"
root_or_sudo "$what needs the Debian packages$missing; run as root: apt-get install$missing"
echo "install: installing$missing with apt-get ($what)" >&2
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# shellcheck disable=SC2086  # word splitting of the package list is intended
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
