#!/bin/bash
# The guest's part of task kernels (e2e/kernels.sh): runs as the QEMU
# guest's init, over this machine's files (read-only) with a tmpfs /tmp, and
# prints what held on the serial console; it powers the guest off.
set -u
arg() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
say() { echo "kernels-guest: $*"; }
export PATH=/usr/local/go/bin:/usr/sbin:/usr/bin:/sbin:/bin TMPDIR=/tmp LANG=C.UTF-8
passed=1
# The binaries and the examples where the user nobody may read them too.
mkdir -p /tmp/bin /tmp/root /tmp/nobody
cp "$(arg proctor.bin)"/* /tmp/bin/ && cp -r "$(arg proctor.repo)/examples" /tmp/examples
chmod -R a+rX /tmp/bin /tmp/examples
chown 65534:65534 /tmp/nobody
tests='TestTheSandbox|TestTheAgentsGitConfigRunsNothingOutsideTheSandbox|TestKill9LeavesNoProcessOfTheRun|TestRunConfinesTheAgentsCommands|TestTheWorkspaceBound|TestProcessBudgetsAreEachRunsOwn|TestAnAgentsCacheWriteNeverReachesTheNextRun|TestAHostWithoutAWall|TestTheReceiptNamesTheWalls|TestDoctorSaysWhatTheHostLacks|TestRunsAreStrangers|TestKill9DuringAWarm|TestAScenariosWarmReachesNoOtherRun'

check() { # NAME USER COMMAND…: run as USER (root or nobody) in its own folder
  local name=$1 user=$2; shift 2
  local home=/tmp/$user
  local as=(env HOME="$home" TMPDIR="$home")
  [ "$user" = nobody ] && as=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$home" TMPDIR="$home")
  local t0=$SECONDS
  if (cd "$home" && "${as[@]}" "$@") >"$home/out" 2>&1; then
    say "$name as $user: ok ($((SECONDS - t0)) s)"
  else
    say "$name as $user: FAILED"
    grep -E -A4 -- "--- FAIL|_test.go:[0-9]+:|^panic" "$home/out" | head -n 80
    tail -n 15 "$home/out"
    passed=0
  fi
}

# finish: says how the guest went and powers it off.
finish() {
  if [ $passed = 1 ]; then echo "PROCTOR-KERNELS: PASS"; else echo "PROCTOR-KERNELS: FAIL"; fi
  sync
  echo o >/proc/sysrq-trigger
  sleep 10
}

mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
ip link set lo up # the attacks try the host's loopback listeners
mkdir -p /dev/shm && mount -t tmpfs -o mode=1777 shm /dev/shm # as a booted system has
say "Linux $(uname -r); security modules: $(cat /sys/kernel/security/lsm 2>/dev/null)"
# PROCTOR_KERNELS_RUN (proctor.run=REGEX): only the containment tests of
# internal/cli that match it, as both users — a quick second look at one.
only="$(arg proctor.run)"
if [ -n "$only" ]; then
  for user in root nobody; do
    check "internal/cli's tests matching $only" $user /tmp/bin/cli.test -test.count=1 -test.v -test.timeout 80m -test.run "$only"
    grep -E "^ *--- " "/tmp/$user/out" | sed "s/^/kernels-guest:   /"
  done
  finish
fi
for user in root nobody; do
  check "proctor doctor" $user /tmp/bin/proctor doctor
  grep -E "^  (landlock|caches|namespaces) |confined .true." "/tmp/$user/out" | sed "s/^/kernels-guest:   /"
  check "internal/sandbox's tests" $user /tmp/bin/sandbox.test -test.count=1 -test.v -test.timeout 80m
  grep -E "^--- " "/tmp/$user/out" | sed "s/^/kernels-guest:   /"
  check "internal/cli's containment tests" $user /tmp/bin/cli.test -test.count=1 -test.v -test.timeout 80m -test.run "$tests"
  grep -E "^--- " "/tmp/$user/out" | sed "s/^/kernels-guest:   /"
  check "the five examples" $user env PROCTOR_DATA=/tmp/$user/data /tmp/bin/proctor scenario run /tmp/examples/scenarios
  grep -E "^(suite|sandbox):" "/tmp/$user/out" | sed "s/^/kernels-guest:   /"
done
finish
