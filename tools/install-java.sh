#!/bin/sh
# Installs Debian's OpenJDK 17 (openjdk-17-jdk-headless: java and javac), the runtime of Java bots
# and of the Java sample (referee/seats/runtimes.py), when it is missing; says so first. Called
# from the Makefile (`make bots`).
set -eu
exec "$(dirname "$0")/install-debian-packages.sh" "Java bots (the Java sample bot)" \
  openjdk-17-jdk-headless
