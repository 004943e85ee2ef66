package sandbox

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

func TestModeAndCommand(t *testing.T) {
	for in, want := range map[string]string{"": ModeWorkspace, "workspace": ModeWorkspace, "strict": ModeStrict, "off": ModeOff} {
		if got, err := Mode(in); err != nil || got != want {
			t.Errorf("Mode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := Mode("loose"); err == nil {
		t.Error("an unknown mode was accepted")
	}
	p := Policy{Write: []string{"/ws", "/tmp/x"}, Read: []string{"/usr/local/go"}, Connect: []int{4000}, MaxFile: 10, CPU: 5, MaxProcs: 64, Offline: true}
	cmd := exec.Command("bash", "-c", "echo --write /etc")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.Confine("/bin/proctor", cmd)
	got := strings.Join(cmd.Args, " ")
	want := "/bin/proctor sandbox-exec --init --write /ws --write /tmp/x --read /usr/local/go --connect 4000 --offline --max-file 10 --cpu 5 --max-procs 64 -- bash -c echo --write /etc"
	if got != want || cmd.Path != "/bin/proctor" {
		t.Fatalf("Confine:\n got %s %s\nwant %s", cmd.Path, got, want)
	}
	// The init of namespaces of its own (a network one when offline),
	// killed when its parent dies, in the process group it was given.
	if a := cmd.SysProcAttr; a.Cloneflags&(syscall.CLONE_NEWPID|syscall.CLONE_NEWNS|syscall.CLONE_NEWNET) != syscall.CLONE_NEWPID|syscall.CLONE_NEWNS|syscall.CLONE_NEWNET || a.Pdeathsig != syscall.SIGKILL || !a.Setpgid {
		t.Fatalf("Confine's process attributes: %+v", a)
	}
	// The helper refuses what it cannot apply, and runs nothing.
	for _, args := range [][]string{{"--connect", "http", "--", "true"}, {"--write", "/ws"}, {"--nope"}} {
		if _, err := Main(args, &strings.Builder{}); err == nil {
			t.Errorf("Main(%q) ran", args)
		}
	}
}

func TestCgroupDir(t *testing.T) {
	v1 := "30 24 0:26 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n" +
		"35 24 0:31 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n" +
		"37 24 0:33 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
	v2 := "25 1 0:22 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
	for _, tc := range []struct {
		name, mountinfo, self, dir string
		v2                         bool
	}{
		{"v1 pids hierarchy", v1, "8:pids:/ci/job\n4:memory:/x\n0::/\n", "/sys/fs/cgroup/pids/ci/job", false},
		{"v1 with pids joined to another controller", strings.Replace(v1, "rw,pids", "rw,pids,cpu", 1), "8:cpu,pids:/a\n", "/sys/fs/cgroup/pids/a", false},
		{"v2 only", v2, "0::/user.slice/user-1000.slice/session-2.scope\n", "/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope", true},
		{"no cgroup mounted", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n", "0::/\n", "", false},
		{"garbage", "nonsense\n - \n", "::\nx\n", "", false},
	} {
		dir, isV2 := cgroupDir(tc.mountinfo, tc.self)
		if dir != tc.dir || isV2 != tc.v2 {
			t.Errorf("%s: cgroupDir = %q, %v; want %q, %v", tc.name, dir, isV2, tc.dir, tc.v2)
		}
	}
}
