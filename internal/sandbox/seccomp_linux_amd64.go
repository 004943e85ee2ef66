package sandbox

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_X86_64

// firstForeignSyscall is where x32's system call numbers start (__X32_SYSCALL_BIT).
const firstForeignSyscall = 0x40000000

// archModeArgs are x86-64's older system calls that set a file's mode.
func archModeArgs() []modeArg {
	return []modeArg{{unix.SYS_CHMOD, 1}, {unix.SYS_CREAT, 1}, {unix.SYS_OPEN, 2}, {unix.SYS_MKNOD, 1}}
}
