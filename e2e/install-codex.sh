#!/usr/bin/env bash
# Installs OpenAI's Codex CLI from npm (@openai/codex at CODEX_VERSION) into
# proctor's cache folder when it is missing, for `task interop`. proctor
# itself never installs agents; this is for the interoperability test only.
# Prints the folder holding the codex command on its last line.
set -euo pipefail

VER="${CODEX_VERSION:-0.171.0}"
DIR="${XDG_CACHE_HOME:-$HOME/.cache}/proctor/codex/$VER"

if ! command -v npm >/dev/null 2>&1; then
  echo "interop: npm is needed to install @openai/codex; install Node.js and npm (apt-get install npm)" >&2
  exit 1
fi
if [ ! -x "$DIR/node_modules/.bin/codex" ]; then
  echo "interop: installing @openai/codex@$VER from npm into $DIR" >&2
  mkdir -p "$DIR"
  npm install --silent --no-audit --no-fund --prefix "$DIR" "@openai/codex@$VER" >&2
fi
"$DIR/node_modules/.bin/codex" --version >&2
echo "$DIR/node_modules/.bin"
