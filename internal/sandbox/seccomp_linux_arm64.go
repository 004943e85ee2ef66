package sandbox

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_AARCH64

// firstForeignSyscall is 0: arm64 has no second table under its own arch.
const firstForeignSyscall = 0

// archModeArgs: arm64 has only the *at system calls.
func archModeArgs() []modeArg { return nil }
