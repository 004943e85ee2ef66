#!/usr/bin/env bash
# task containers: proctor inside Docker containers, as people run agents in
# them. Debian's docker.io is started by hand (no systemd, no bridge, no
# iptables) and every container runs with --network none: nothing here needs
# a network, and no traffic leaves loopback. The image is a Debian root file
# system made by mmdebstrap from Debian's packages, imported once and kept.
#
#   1. Docker's defaults: proctor doctor names the wall (exit 1); the five
#      examples are refused before any agent starts (broken, not failed).
#   2. The documented least privilege (`proctor doctor --seccomp-profile`:
#      Docker's default profile and the sandbox's system calls, an unmasked
#      /proc, no capability added), the data folder on the
#      container's own overlay root: doctor exit 0; the examples pass with
#      plain caches, and the receipts say so.
#   3. The same as a user who is not root, the data folder on a tmpfs: the
#      examples pass with warm overlay caches.
#   4. The same privilege: the containment tests (internal/sandbox whole,
#      the hostile-agent tests of internal/cli) pass inside.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "containers: $*" >&2; }
fail() { echo "containers: FAIL: $*" >&2; exit 1; }

if [ "$(id -u)" != 0 ]; then
  log "needs root (it starts dockerd); skipped"
  exit 0
fi
missing=""
for p in dockerd:docker.io mmdebstrap:mmdebstrap; do
  command -v "${p%%:*}" >/dev/null || missing="$missing ${p#*:}"
done
if [ -n "$missing" ]; then
  log "installing$missing from Debian"
  apt-get update -qq && apt-get install -y -qq $missing >/dev/null
fi

cache="${XDG_CACHE_HOME:-$HOME/.cache}/proctor/containers"
run="$(mktemp -d /tmp/proctor-containers.XXXXXX)"
mkdir -p "$cache" "$run/bin"
export DOCKER_HOST="unix://$run/docker.sock"
dockerd --bridge=none --iptables=false --ip6tables=false --data-root "$cache/docker" \
  --exec-root "$run/exec" --pidfile "$run/dockerd.pid" -H "$DOCKER_HOST" >"$run/dockerd.log" 2>&1 &
cleanup() {
  kill "$(cat "$run/dockerd.pid" 2>/dev/null)" 2>/dev/null || true
  sleep 1
  rm -rf "$run"
}
trap cleanup EXIT
for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
docker info >/dev/null 2>&1 || { cat "$run/dockerd.log" >&2; fail "dockerd did not start"; }
log "$(docker version --format 'Docker {{.Server.Version}}')"

image=proctor-test:bookworm
if ! docker image inspect "$image" >/dev/null 2>&1; then
  log "making $image (mmdebstrap bookworm minbase + git)"
  mmdebstrap --quiet --variant=minbase --include=git,procps bookworm "$run/rootfs.tar"
  docker import "$run/rootfs.tar" "$image" >/dev/null
  rm -f "$run/rootfs.tar"
fi

log "building proctor and the containment tests"
CGO_ENABLED=0 go build -o "$run/bin/proctor" ./cmd/proctor
go test -c -o "$run/bin/sandbox.test" ./internal/sandbox
go test -c -o "$run/bin/cli.test" ./internal/cli
chmod -R a+rX "$run/bin"
goroot="$(go env GOROOT)"
common=(--rm --network none -v "$run/bin:/opt/proctor:ro" -v "$goroot:/usr/local/go:ro"
  -v "$PWD/examples:/examples:ro" -e PATH=/usr/local/go/bin:/usr/bin:/bin)
"$run/bin/proctor" doctor --seccomp-profile >"$run/seccomp.json"
least=(--security-opt "seccomp=$run/seccomp.json" --security-opt systempaths=unconfined)

log "1. Docker's defaults"
set +e
out="$(docker run "${common[@]}" "$image" /opt/proctor/proctor doctor 2>&1)"; code=$?
set -e
[ "$code" = 1 ] && grep -q "namespaces    FAILED" <<<"$out" && grep -q "proctor doctor --seccomp-profile" <<<"$out" ||
  fail "doctor in a default container: exit $code
$out"
set +e
out="$(docker run "${common[@]}" "$image" /opt/proctor/proctor scenario run /examples/scenarios 2>&1)"; code=$?
set -e
[ "$code" = 2 ] && grep -q "5 cases in .*: 0 passed, 0 failed, 5 broken" <<<"$out" && grep -q "sandbox_unavailable" <<<"$out" ||
  fail "the examples in a default container: exit $code
$out"
! grep -q '"tool.call"' <<<"$(docker run "${common[@]}" "$image" sh -c \
  '/opt/proctor/proctor scenario run /examples/scenarios >/dev/null 2>&1; cat /root/.local/share/proctor/runs/*/events.jsonl')" ||
  fail "an agent started in a default container"
log "   refused before any agent started, with the fix"

log "2. least privilege, data folder on the container's overlay root"
out="$(docker run "${common[@]}" "${least[@]}" "$image" /opt/proctor/proctor doctor 2>&1)" ||
  fail "doctor under the least privilege:
$out"
out="$(docker run "${common[@]}" "${least[@]}" "$image" /opt/proctor/proctor scenario run /examples/scenarios 2>&1)" ||
  fail "the examples under the least privilege:
$out"
grep -q "5 passed, 0 failed, 0 broken" <<<"$out" && grep -q "^sandbox: user, mount, pid, network, ipc, uts namespaces; seccomp; .*caches plain: " <<<"$out" ||
  fail "the examples under the least privilege:
$out"
log "   $(grep '^sandbox: ' <<<"$out" | cut -c1-140)…"

log "3. least privilege, a user who is not root, the data folder on a tmpfs"
out="$(docker run "${common[@]}" "${least[@]}" --user 1000:1000 --tmpfs /data:exec,mode=1777 -e HOME=/data -e PROCTOR_DATA=/data/proctor \
  "$image" /opt/proctor/proctor scenario run /examples/scenarios 2>&1)" || fail "the examples as user 1000:
$out"
grep -q "5 passed, 0 failed, 0 broken" <<<"$out" && grep -q "^sandbox: .*caches overlay$" <<<"$out" ||
  fail "the examples as user 1000:
$out"
log "   $(grep '^sandbox: ' <<<"$out")"

log "4. the containment tests inside, least privilege, as root and as user 1000"
for user in 0:0 1000:1000; do
  docker run "${common[@]}" "${least[@]}" --user "$user" --tmpfs /tmp:exec,mode=1777 -e HOME=/tmp -w /tmp "$image" \
    /opt/proctor/sandbox.test -test.count=1 >"$run/sandbox.log" 2>&1 || { cat "$run/sandbox.log" >&2; fail "internal/sandbox's tests as $user"; }
  docker run "${common[@]}" "${least[@]}" --user "$user" --tmpfs /tmp:exec,mode=1777 -e HOME=/tmp -w /tmp "$image" \
    /opt/proctor/cli.test -test.count=1 -test.run 'TestTheSandbox|TestTheAgentsGitConfigRunsNothingOutsideTheSandbox|TestKill9LeavesNoProcessOfTheRun|TestRunConfinesTheAgentsCommands|TestTheWorkspaceBound|TestProcessBudgetsAreEachRunsOwn|TestAHostWithoutAWall|TestTheReceiptNamesTheWalls' \
    >"$run/cli.log" 2>&1 || { cat "$run/cli.log" >&2; fail "internal/cli's containment tests as $user"; }
  log "   as $user: internal/sandbox and internal/cli's containment tests pass"
done
log "5. seccomp=unconfined alone is not enough"
set +e
out="$(docker run "${common[@]}" --security-opt seccomp=unconfined "$image" /opt/proctor/proctor doctor 2>&1)"; code=$?
set -e
[ "$code" = 1 ] && grep -q "proc          FAILED" <<<"$out" || fail "seccomp=unconfined alone: exit $code
$out"
log "   seccomp=unconfined alone: /proc cannot be mounted (exit 1, the fix named)"
log "all passed"
