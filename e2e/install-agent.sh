#!/usr/bin/env bash
# Installs one coding agent's CLI from npm, at a pinned version, into
# proctor's cache folder when it is missing, for `task interop`. proctor
# itself never installs agents; this is for the interoperability tests only.
# Usage: install-agent.sh NAME NPM_PACKAGE VERSION COMMAND
# Prints the folder holding COMMAND on its last line.
set -euo pipefail

NAME="$1" PKG="$2" VER="$3" CMD="$4"
DIR="${XDG_CACHE_HOME:-$HOME/.cache}/proctor/$NAME/$VER"

if ! command -v npm >/dev/null 2>&1; then
  echo "interop: npm is needed to install $PKG; install Node.js and npm (apt-get install npm)" >&2
  exit 1
fi
if [ ! -x "$DIR/node_modules/.bin/$CMD" ]; then
  echo "interop: installing $PKG@$VER from npm into $DIR" >&2
  mkdir -p "$DIR"
  npm install --silent --no-audit --no-fund --prefix "$DIR" "$PKG@$VER" >&2
fi
"$DIR/node_modules/.bin/$CMD" --version >&2
echo "$DIR/node_modules/.bin"
