#!/usr/bin/env bash
# task kernels: proctor's sandbox on the kernels people have. Debian's own
# kernel packages (bookworm's 6.1, trixie's 6.12) boot under QEMU (KVM where
# /dev/kvm is, else TCG) over this machine's files, shared read-only by 9p
# with a busybox initramfs; the binaries are built here and run there:
# proctor doctor, the containment tests (internal/sandbox whole, the
# hostile-agent tests of internal/cli) and the five examples, as root and as
# the user nobody. The guest has no network device.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

log() { echo "kernels: $*" >&2; }
fail() { echo "kernels: FAIL: $*" >&2; exit 1; }

if [ "$(id -u)" != 0 ]; then
  log "needs root (QEMU shares / with the guest as it is); skipped"
  exit 0
fi
missing=""
for p in qemu-system-x86_64:qemu-system-x86 busybox:busybox-static depmod:kmod; do
  command -v "${p%%:*}" >/dev/null || missing="$missing ${p#*:}"
done
if [ -n "$missing" ]; then
  log "installing$missing from Debian"
  apt-get update -qq && apt-get install -y -qq $missing >/dev/null
fi
busybox --list | grep -qx switch_root || fail "busybox has no switch_root: install busybox-static"

cache="${XDG_CACHE_HOME:-$HOME/.cache}/proctor/kernels"
mkdir -p "$cache"
# The run's folder is under the cache (the guest sees the host's /tmp
# covered by its own tmpfs).
run="$(mktemp -d "$cache/run.XXXXXX")"
trap 'rm -rf "$run"' EXIT
chmod 755 "$run"

# kernel SUITE: the newest linux-image-*-amd64 of a Debian suite, unpacked
# into the cache once; prints its folder.
kernel() {
  local suite=$1 apt="$cache/apt-$1"
  mkdir -p "$apt/lists/partial" "$apt/archives/partial"
  echo "deb http://deb.debian.org/debian $suite main" >"$apt/sources.list"
  local opts=(-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o Dir::State::Lists="$apt/lists" -o Dir::Cache::Archives="$apt/archives" -o APT::Sandbox::User=root)
  if [ ! -f "$apt/updated" ]; then
    apt-get "${opts[@]}" update -qq >&2 && touch "$apt/updated"
  fi
  local pkg
  pkg="$(apt-cache "${opts[@]}" search --names-only '^linux-image-[0-9][0-9.]*(-[0-9]+|\+deb[0-9]+)-amd64$' | cut -d' ' -f1 | sort -V | tail -n 1)"
  [ -n "$pkg" ] || fail "no kernel package in $suite"
  local dir="$cache/$pkg"
  if [ ! -d "$dir/boot" ]; then
    (cd "$apt" && apt-get "${opts[@]}" download "$pkg" >&2)
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
    dpkg-deb -x "$apt/${pkg}"_*.deb "$dir.tmp"
    rm -f "$apt/${pkg}"_*.deb
    mv "$dir.tmp" "$dir"
  fi
  # A merged-/usr package (trixie's) has its modules in usr/lib/modules,
  # where an older depmod -b does not look.
  if [ ! -e "$dir/lib" ] && [ -d "$dir/usr/lib/modules" ]; then ln -s usr/lib "$dir/lib"; fi
  if ! ls "$dir"/lib/modules/*/modules.dep >/dev/null 2>&1; then
    depmod -b "$dir" "$(ls "$dir/lib/modules")"
  fi
  echo "$dir"
}

# initramfs DIR: busybox, the modules that reach the host's files (virtio,
# 9p) and overlayfs, and an init that mounts the host's / read-only and
# switches to it, to run the guest's script named on the command line.
# 9p is mounted cache=loose: without a cache (before 6.6 at least) every
# lookup of a file makes it a new inode, and a Landlock rule — held on an
# inode — on a file such as /etc/gitconfig is gone by the time the
# command opens it (EACCES), while the rules on folders, whose inodes stay,
# still hold.
initramfs() {
  local dir=$1 out=$2 ver
  ver="$(ls "$dir/lib/modules")"
  local m="$dir/lib/modules/$ver" root="$run/initramfs"
  rm -rf "$root" && mkdir -p "$root"/{bin,dev,proc,sys,host,mod}
  cp "$(command -v busybox)" "$root/bin/busybox"
  : >"$root/modules"
  add() { # a module after its dependencies, once
    local rel=$1 dep
    grep -qx "$rel" "$root/modules" && return
    for dep in $(grep -E "^$rel:" "$m/modules.dep" | cut -d: -f2); do add "$dep"; done
    case "$rel" in # busybox's insmod takes a module uncompressed
      *.xz) xz -dc "$m/$rel" >"$root/mod/$(basename "${rel%.xz}")" ;;
      *) cp "$m/$rel" "$root/mod/" ;;
    esac
    echo "$rel" >>"$root/modules"
  }
  for name in virtio_pci 9pnet_virtio 9p overlay; do
    local rel
    rel="$(grep -oE "^[^:]*/$name\.ko(\.xz)?:" "$m/modules.dep" | tr -d :)" || true # none: built in
    if [ -n "$rel" ]; then add "$rel"; fi # else it is built in
  done
  cat >"$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for rel in $(cat /modules); do insmod "/mod/$(basename "${rel%.xz}")"; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose host /host || { echo "PROCTOR-KERNELS: FAIL (no 9p)"; poweroff -f; }
for d in proc sys dev tmp run; do mkdir -p /host/$d 2>/dev/null; done
mount -t proc proc /host/proc; mount -t sysfs sys /host/sys; mount -t devtmpfs dev /host/dev
mount -t tmpfs -o mode=1777 tmpfs /host/tmp; mount -t tmpfs tmpfs /host/run
guest="$(sed -n 's/.*proctor.guest=\([^ ]*\).*/\1/p' /proc/cmdline)"
exec switch_root /host /bin/bash "$guest"
EOF
  chmod 755 "$root/init"
  (cd "$root" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) >"$out"
}

# boot DIR VER ACCEL…: the guest runs kernels-guest.sh and powers off;
# its console is console-VER.log. A guest that has said nothing within two
# minutes is stopped (a kernel that does not start under this accelerator);
# one still running after PROCTOR_KERNELS_TIMEOUT seconds (default 90
# minutes) is stopped too.
boot() {
  local dir=$1 ver=$2; shift 2
  timeout "${PROCTOR_KERNELS_TIMEOUT:-5400}" qemu-system-x86_64 "$@" -m 4096 -smp 2 -nographic -no-reboot -nic none \
    -kernel "$dir/boot/vmlinuz-$ver" -initrd "$run/initrd-$ver.gz" \
    -virtfs "local,path=/,mount_tag=host,security_model=passthrough,readonly=on,multidevs=remap" \
    -append "console=ttyS0 quiet panic=-1 proctor.guest=$repo/e2e/kernels-guest.sh proctor.bin=$run/bin proctor.repo=$repo${PROCTOR_KERNELS_RUN:+ proctor.run=$PROCTOR_KERNELS_RUN}" \
    </dev/null >"$run/console-$ver.log" 2>&1 &
  local qemu=$! waited=0
  while kill -0 $qemu 2>/dev/null; do
    if [ $waited -ge 120 ] && ! grep -aq "kernels-guest:" "$run/console-$ver.log"; then
      kill $qemu 2>/dev/null
      break
    fi
    sleep 2
    waited=$((waited + 2))
  done
  wait $qemu 2>/dev/null || true
}

log "building proctor and the containment tests"
mkdir -p "$run/bin"
CGO_ENABLED=0 go build -o "$run/bin/proctor" ./cmd/proctor
go test -c -o "$run/bin/sandbox.test" ./internal/sandbox
go test -c -o "$run/bin/cli.test" ./internal/cli
chmod -R a+rX "$run/bin"
# KVM where it works (PROCTOR_QEMU_ACCEL=tcg forces software emulation:
# under nested virtualization KVM may start no guest kernel).
accel=(-accel tcg)
if [ "${PROCTOR_QEMU_ACCEL:-kvm}" = kvm ] && [ -w /dev/kvm ]; then accel=(-enable-kvm); fi

status=0
for suite in ${PROCTOR_KERNEL_SUITES:-bookworm trixie}; do
  dir="$(kernel "$suite")"
  ver="$(ls "$dir/lib/modules")"
  initramfs "$dir" "$run/initrd-$ver.gz"
  log "booting $ver ($suite) under QEMU (${accel[0]})"
  start=$(date +%s)
  boot "$dir" "$ver" "${accel[@]}"
  if [ "${accel[0]}" = -enable-kvm ] && ! grep -aq "kernels-guest:" "$run/console-$ver.log"; then
    log "KVM started no guest kernel (nested virtualization?): again under TCG"
    boot "$dir" "$ver" -accel tcg
  fi
  cp "$run/console-$ver.log" "$cache/console-$ver.log" # kept for a look after
  grep -aoE "(kernels-guest|PROCTOR-KERNELS):.*" "$run/console-$ver.log" | sed "s/^/  [$ver] /" >&2 || true
  if ! grep -aq "PROCTOR-KERNELS: PASS" "$run/console-$ver.log"; then
    tail -n 60 "$run/console-$ver.log" >&2
    log "$ver: FAILED"
    status=1
  else
    log "$ver: passed in $(($(date +%s) - start)) s"
  fi
done
exit $status
