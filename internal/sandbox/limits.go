package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// limitProcesses holds the command and everything it starts to max tasks
// (processes and threads). RLIMIT_NPROC does not bind root, so as root the
// command is put in a pids cgroup of its own when one is writable (a cgroup
// v1 pids hierarchy, or a v2 subtree with the pids controller delegated);
// another user's command runs in a user namespace of its own, where the
// limit is RLIMIT_NPROC over the init's own threads.
func limitProcesses(max uint64) error {
	if os.Geteuid() != 0 {
		// A user who is not root runs the command in a user namespace of
		// its own, where RLIMIT_NPROC counts only the tasks of that
		// namespace: the init's own threads and what the command starts.
		n, err := ownThreads()
		if err != nil {
			return fmt.Errorf("count the init's threads: %w", err)
		}
		v := n + max
		return unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: v, Max: v})
	}
	dir, ok := pidsCgroup()
	if !ok {
		return nil // documented: as root without a writable pids cgroup, processes are not limited
	}
	collect(dir)
	own := filepath.Join(dir, "proctor-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(own, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("make pids cgroup %s: %w", own, err)
	}
	if err := os.WriteFile(filepath.Join(own, "pids.max"), []byte(strconv.FormatUint(max, 10)), 0o644); err != nil {
		return fmt.Errorf("limit pids cgroup %s: %w", own, err)
	}
	if err := os.WriteFile(filepath.Join(own, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return fmt.Errorf("join pids cgroup %s: %w", own, err)
	}
	return nil
}

// pidsCgroup is the pids cgroup this process is in, when it can make
// cgroups below it.
func pidsCgroup() (string, bool) {
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", false
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", false
	}
	dir, v2 := cgroupDir(string(mounts), string(own))
	if dir == "" {
		return "", false
	}
	if v2 { // a v2 child has a pids.max only when the controller is delegated
		sub, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
		if err != nil || !slices.Contains(strings.Fields(string(sub)), "pids") {
			return "", false
		}
	}
	return dir, unix.Access(dir, unix.W_OK) == nil
}

// cgroupDir is the folder of this process's pids cgroup, from its
// /proc/self/mountinfo and /proc/self/cgroup: in the v1 pids hierarchy when
// there is one, else in the v2 hierarchy (v2 true).
func cgroupDir(mountinfo, self string) (dir string, v2 bool) {
	var v1Mount, v2Mount string
	for line := range strings.Lines(mountinfo) {
		// id parent major:minor root mountpoint options - fstype source super-options
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 {
			continue
		}
		switch {
		case g[0] == "cgroup" && slices.Contains(strings.Split(g[2], ","), "pids"):
			v1Mount = f[4]
		case g[0] == "cgroup2" && v2Mount == "":
			v2Mount = f[4]
		}
	}
	for line := range strings.Lines(self) {
		// hierarchy-id:controllers:path
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		switch {
		case len(parts) != 3:
		case v1Mount != "" && slices.Contains(strings.Split(parts[1], ","), "pids"):
			return filepath.Join(v1Mount, parts[2]), false
		case v1Mount == "" && v2Mount != "" && parts[0] == "0":
			return filepath.Join(v2Mount, parts[2]), true
		}
	}
	return "", false
}

// collect removes the cgroups of earlier commands whose helper process (the
// command itself, as the helper executes it) is gone; a cgroup still holding
// a process is not removed (rmdir refuses it).
func collect(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		pid, ok := strings.CutPrefix(e.Name(), "proctor-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || !e.IsDir() {
			continue
		}
		if syscall.Kill(n, 0) == syscall.ESRCH {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// ownThreads counts the threads of this process.
func ownThreads() (uint64, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, errors.New("no Threads line in /proc/self/status")
}
