#!/usr/bin/env bash
# Installs what the browser tests need, when it is missing, without any
# download from outside the package registries: Debian's Chromium (apt) and
# the Playwright driver that playwright-go expects (npm's playwright-core at
# the matching version, beside the system node). Idempotent and quick when
# everything is present. Prints the driver folder on its last line.
set -euo pipefail

VER="${PLAYWRIGHT_CORE_VERSION:-1.52.0}" # matches playwright-go v0.5200.1 in go.mod
DIR="${PLAYWRIGHT_DRIVER_PATH:-${XDG_CACHE_HOME:-$HOME/.cache}/proctor/pwdriver/$VER}"

if ! command -v chromium >/dev/null 2>&1; then
  echo "e2e: installing Chromium from Debian's packages" >&2
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >&2
fi

if ! command -v node >/dev/null 2>&1; then
  echo "e2e: node is needed for the Playwright driver; install Node.js (apt-get install nodejs)" >&2
  exit 1
fi

if [ ! -f "$DIR/package/cli.js" ]; then
  echo "e2e: fetching playwright-core@$VER from npm into $DIR" >&2
  mkdir -p "$DIR"
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "playwright-core@$VER" >/dev/null)
  tar -xzf "$tmp/playwright-core-$VER.tgz" -C "$DIR"
  rm -rf "$tmp"
fi
ln -sfn "$(command -v node)" "$DIR/node"
"$DIR/node" "$DIR/package/cli.js" --version >/dev/null
echo "$DIR"
