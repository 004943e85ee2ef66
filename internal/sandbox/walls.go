package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Wall names one piece of the sandbox: what a command had, or what could
// not be put up. The walls proctor requires are the namespaces (with the
// view built in them) and the seccomp filter; Landlock stands behind them
// at whatever ABI the kernel has, and warm toolchain caches need an
// overlay the data folder's file system can hold.
type Wall string

// The walls, in the order the init puts them up.
const (
	WallNamespaces   Wall = "namespaces"   // user, mount, PID, network, IPC and UTS namespaces (clone)
	WallLimits       Wall = "limits"       // RLIMIT_FSIZE, RLIMIT_CPU, RLIMIT_NPROC
	WallView         Wall = "view"         // the read-only view: open_tree, mount_setattr, pivot_root
	WallProc         Wall = "proc"         // the PID namespace's own /proc
	WallCaches       Wall = "caches"       // toolchain caches as overlays
	WallNetwork      Wall = "network"      // its loopback, the model proxy's relay
	WallKeyring      Wall = "keyring"      // a new session keyring
	WallCapabilities Wall = "capabilities" // every capability dropped, no_new_privs
	WallLandlock     Wall = "landlock"
	WallSeccomp      Wall = "seccomp"
	WallInit         Wall = "init" // the init ended before it said how it started
)

// Namespaces are the namespaces every confined command has.
var Namespaces = []string{"user", "mount", "pid", "network", "ipc", "uts"}

// Walls are the walls a confined command had.
type Walls struct {
	Namespaces []string `json:"namespaces"`
	Seccomp    bool     `json:"seccomp"`
	// LandlockABI is the Landlock ABI the command's rules used (0: none:
	// the kernel has no Landlock, or PROCTOR_LANDLOCK_ABI=0).
	LandlockABI int `json:"landlock_abi"`
	// Landlock is what those rules cover at that ABI (LandlockScopes).
	Landlock []string `json:"landlock,omitempty"`
	// Caches says how its toolchain caches were given: "overlay" (warm,
	// copy-on-write) or "plain: WHY" (empty folders of the run's own).
	Caches string `json:"caches,omitempty"`
	// ID is the host id a run's commands ran as (its lease, LeaseID);
	// IDShared says it is proctor's user's own, which the user's other
	// runs share. A probe has none.
	ID       int  `json:"id,omitempty"`
	IDShared bool `json:"id_shared,omitempty"`
}

// LandlockScopes are what Landlock's rules cover at an ABI: files from 1,
// moves and links across folders from 2, truncation from 3, TCP from 4,
// device ioctls from 5, signals and abstract unix sockets from 6, pathname
// unix sockets from 9.
func LandlockScopes(abi int) []string {
	var out []string
	for _, s := range []struct {
		abi  int
		name string
	}{{1, "files"}, {2, "refer"}, {3, "truncate"}, {4, "tcp"}, {5, "ioctl-dev"}, {6, "signals"}, {6, "abstract-unix"}, {9, "unix-sockets"}} {
		if abi >= s.abi {
			out = append(out, s.name)
		}
	}
	return out
}

// maxLandlockABI is the newest ABI proctor's rules use.
const maxLandlockABI = 9

// NoLandlock is Policy.LandlockABI for no Landlock at all.
const NoLandlock = -1

// LandlockCap is Policy.LandlockABI as PROCTOR_LANDLOCK_ABI asks (to see
// how proctor holds on an older kernel, or to step around a kernel's
// Landlock): unset, the kernel's newest; N, at most ABI N; 0, none. The
// receipt says which ABI each run had.
func LandlockCap(getenv func(string) string) (int, error) {
	v := getenv("PROCTOR_LANDLOCK_ABI")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	switch {
	case err != nil || n < 0:
		return 0, fmt.Errorf("PROCTOR_LANDLOCK_ABI=%q: want a number from 0 (no Landlock) to %d", v, maxLandlockABI)
	case n == 0:
		return NoLandlock, nil
	}
	return n, nil
}

// landlockABI is the ABI a command's rules use under the cap (as
// Policy.LandlockABI): the kernel's, at most maxLandlockABI and the cap;
// 0 when the kernel has no Landlock.
func landlockABI(limit int) int {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || limit == NoLandlock {
		return 0
	}
	abi = min(abi, maxLandlockABI)
	if limit > 0 {
		abi = min(abi, limit)
	}
	return abi
}

// StartError is a confined command that did not start: a wall could not be
// put up. It is never the command's failure, and never the agent's: the
// host cannot give what the sandbox requires (Fix says what to change).
type StartError struct {
	Wall Wall
	Err  error
}

func (e *StartError) Error() string {
	return fmt.Sprintf("the sandbox could not start (%s): %v; %s", e.Wall, e.Err, e.Fix())
}

func (e *StartError) Unwrap() error { return e.Err }

// Fix says what to change on this host so that the wall can be put up.
func (e *StartError) Fix() string { return e.fixOn(runtime.GOOS) }

// fixOn is Fix on the system goos.
func (e *StartError) fixOn(goos string) string {
	errno := syscall.Errno(errnoOf(e.Err))
	root := os.Geteuid() == 0
	const doctor = "`proctor doctor` checks this host and prints the fixes"
	switch {
	case goos != "linux":
		return "run proctor in a Linux machine, VM or container for confined runs (a Linux VM of Docker Desktop, Lima or WSL2 with the container options of docs/security.md), or pass --sandbox off to run this run's commands with your own permissions; the dashboard, review, index, push and compare work here as they are"
	case e.Wall == WallNamespaces && errno == syscall.ENOSPC:
		return "the kernel allows no more user namespaces (user.max_user_namespaces is 0 or used up): `sysctl -w user.max_user_namespaces=15000`; " + doctor
	case e.Wall == WallNamespaces && errno == syscall.EINVAL:
		return "this kernel was built without user namespaces (CONFIG_USER_NS): use a kernel that has them; " + doctor
	case e.Wall == WallNamespaces && root:
		return "something around proctor refuses new namespaces even to root — in a container, its seccomp profile (Docker's and Podman's default refuse them): start the container with " + containerOptions + " (docs/security.md, \"What a host must provide\"); " + doctor
	case e.Wall == WallNamespaces:
		return "this host does not let a user who is not root make user namespaces (Ubuntu 23.10 and later restrict them through AppArmor; other kernels through kernel.unprivileged_userns_clone=0, or a container's seccomp profile): `proctor doctor` prints the AppArmor profile that allows proctor, or run proctor as root"
	case e.Wall == WallView && errno == syscall.ENOSYS:
		return "this kernel has no open_tree or mount_setattr (Linux 5.12 and later have them): use a newer kernel; " + doctor
	case e.Wall == WallView && !root:
		return "the user namespace gives no mount rights — Ubuntu 23.10 and later let an unconfined program make one but not use it: `proctor doctor` prints the AppArmor profile that allows proctor, or run proctor as root"
	case e.Wall == WallView, e.Wall == WallKeyring:
		return "a seccomp profile around proctor refuses a system call the sandbox needs (in a container: start it with " + containerOptions + "); " + doctor
	case e.Wall == WallProc:
		return "/proc cannot be mounted for the command's PID namespace: a container masks parts of its /proc — start it with `--security-opt systempaths=unconfined` (Docker), `--security-opt unmask=ALL` (Podman) or `securityContext.procMount: Unmasked` (Kubernetes); " + doctor
	case e.Wall == WallCaches:
		return "the data folder's file system cannot hold an overlay's upper folder (an overlay root, as a container's is): put the data folder on a volume (`--data` on a bind mount or tmpfs)"
	case e.Wall == WallSeccomp:
		return "this kernel cannot load the sandbox's seccomp filter (CONFIG_SECCOMP_FILTER): use a kernel that has it"
	case e.Wall == WallLandlock:
		return "set PROCTOR_LANDLOCK_ABI to an older ABI, or 0, to work around this kernel's Landlock; " + doctor
	}
	return doctor
}

// containerOptions are the options of a Docker or Podman container in
// which the sandbox starts: a seccomp profile that allows the sandbox's
// system calls (Docker's default and one rule: `proctor doctor
// --seccomp-profile`) and an unmasked /proc, so that a PID namespace can
// mount its own. No capability is added.
const containerOptions = "`--security-opt seccomp=proctor-seccomp.json --security-opt systempaths=unconfined`, proctor-seccomp.json written by `proctor doctor --seccomp-profile`"

// The init reports to proctor on a pipe (--report-fd) how the command
// started: one JSON line, the walls it had or the wall that failed.
type report struct {
	Walls *Walls `json:"walls,omitempty"`
	Wall  Wall   `json:"wall,omitempty"`
	Error string `json:"error,omitempty"`
	Errno int    `json:"errno,omitempty"`
}

// wallError is an error of the init with the wall it was putting up.
type wallError struct {
	wall Wall
	err  error
}

func (e *wallError) Error() string { return e.err.Error() }
func (e *wallError) Unwrap() error { return e.err }

// atWall tags err with the wall being put up, unless it has one already.
func atWall(wall Wall, err error) error {
	var we *wallError
	if err == nil || errors.As(err, &we) {
		return err
	}
	return &wallError{wall, err}
}

// sendReport writes the init's report and closes the pipe.
func sendReport(w io.WriteCloser, walls *Walls, err error) {
	r := report{Walls: walls}
	if err != nil {
		r.Wall, r.Error = WallInit, err.Error()
		var we *wallError
		if errors.As(err, &we) {
			r.Wall = we.wall
		}
		r.Errno = errnoOf(err)
	}
	raw, _ := json.Marshal(r)
	w.Write(append(raw, '\n'))
	w.Close()
}

// readReport reads the init's report: the walls the command had, or the
// wall that could not be put up as a *StartError. An init that ended
// without a word (killed, or a crash) is a StartError of WallInit with
// what it printed.
func readReport(r io.Reader, printed []byte) (Walls, error) {
	raw, _ := io.ReadAll(io.LimitReader(r, 1<<16))
	var rep report
	if err := json.Unmarshal(raw, &rep); err != nil || (rep.Walls == nil && rep.Wall == "") {
		msg := strings.TrimSpace(string(printed))
		if msg == "" {
			msg = "it said nothing"
		}
		return Walls{}, &StartError{Wall: WallInit, Err: fmt.Errorf("the sandbox's init ended before the command started: %s", msg)}
	}
	if rep.Walls != nil {
		return *rep.Walls, nil
	}
	return Walls{}, &StartError{Wall: rep.Wall, Err: reported{rep.Error, syscall.Errno(rep.Errno)}}
}

// errnoOf is the errno err wraps, 0 when none.
func errnoOf(err error) int {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return int(errno)
	}
	return 0
}

// reported is an error the init reported, with its errno (0: none).
type reported struct {
	msg   string
	errno syscall.Errno
}

func (e reported) Error() string { return e.msg }

func (e reported) Unwrap() error {
	if e.errno == 0 {
		return nil
	}
	return e.errno
}
