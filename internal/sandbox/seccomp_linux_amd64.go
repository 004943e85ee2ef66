package sandbox

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_X86_64

// firstForeignSyscall is where x32's system call numbers start (__X32_SYSCALL_BIT).
const firstForeignSyscall = 0x40000000
