# Sourced by the install scripts: root_or_sudo MESSAGE sets SUDO to "" as root, to "sudo" where
# sudo is there, and otherwise says MESSAGE (what to run as root) and exits 1.
root_or_sudo() {
  if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
  elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "install: $1" >&2
    exit 1
  fi
}
