#!/bin/sh
# Installs Debian's chromium, the browser the dashboard's browser tests drive through Playwright
# (never a browser build of Playwright's own), when it is missing. Called from the Makefile.
set -eu
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
exec "$(dirname "$0")/install-debian-packages.sh" "the dashboard's browser tests" chromium
