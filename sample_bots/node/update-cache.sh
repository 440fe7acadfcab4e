#!/bin/sh
# Remakes npm-cache/, the vendored npm cache the build installs from offline, from
# package-lock.json (needs the network once; every lockfile entry names its tarball, so the
# cache holds the tarballs only). Run it after changing package.json: npm install, then this.
set -eu
cd "$(dirname "$0")"
rm -rf npm-cache node_modules
npm ci --cache ./npm-cache --no-audit --no-fund
rm -rf npm-cache/_logs npm-cache/_cacache/tmp node_modules
du -sh npm-cache
