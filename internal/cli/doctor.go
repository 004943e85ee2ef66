package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/proc"
	"github.com/proctor-dev/proctor/internal/sandbox"
)

// doctorReport is what `proctor doctor --json` prints: how each wall went
// as one user, and whether a confined command starts.
type doctorReport struct {
	User     string            `json:"user"`
	UID      int               `json:"uid"`
	Kernel   string            `json:"kernel"`
	Findings []sandbox.Finding `json:"findings"`
	Walls    *bundle.Walls     `json:"walls,omitempty"` // a confined `true` had these
	Refused  string            `json:"refused,omitempty"`
	// IDs says which id a run's commands would run as here: one of the
	// run's own, or the user's (and why).
	IDs      string             `json:"ids,omitempty"`
	Nobody   *doctorReport      `json:"nobody,omitempty"` // as root: the same for a user who is not root
	Skipped  string             `json:"skipped,omitempty"`
	AppArmor *doctorAppArmorFix `json:"apparmor,omitempty"`
}

type doctorAppArmorFix struct {
	Profile string `json:"profile"`
	Checked string `json:"checked"` // what apparmor_parser said
}

func runDoctor(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "doctor", "[--json] [--apparmor-profile | --seccomp-profile]", `
Say what this host gives a confined command, wall by wall — found by trying
each (starting the sandbox's init in its namespaces, then each step of it:
the read-only view, its /proc, a toolchain cache as an overlay on the data
folder, the network, the keyring, dropping capabilities, Landlock at this
kernel's ABI, seccomp) and by starting a confined 'true' as a run's commands
start — never by reading sysctls. Each wall that fails comes with the fix:
the kernel, the AppArmor profile Ubuntu's user-namespace restriction needs
(printed and, where apparmor_parser is installed, checked), the container's
options (--seccomp-profile prints the seccomp profile a container needs). As root it also tries as the user nobody, as a user who is not
root would run proctor.

Exit 0 when a run with the sandbox on starts here, 1 when it would be
refused.`)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	profile := fs.Bool("apparmor-profile", false, "print only the AppArmor profile that lets this proctor binary make user namespaces")
	seccompProfile := fs.Bool("seccomp-profile", false, "print only the seccomp profile a Docker or Podman container needs for the sandbox: Docker 20.10.24's default plus the system calls the sandbox makes")
	data := fs.String("data", "", "the data `folder` whose file system the caches' overlays are tried on (default as serve's)")
	if err := parseFlags(fs, "doctor", args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("doctor", "takes no arguments")
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("doctor: find the proctor binary: %w", err)
	}
	if real, err := filepath.EvalSymlinks(self); err == nil {
		self = real
	}
	if *profile {
		fmt.Fprint(env.Stdout, sandbox.AppArmorProfile(self))
		return nil
	}
	if *seccompProfile {
		raw, err := sandbox.DockerSeccompProfile()
		if err != nil {
			return err
		}
		_, err = env.Stdout.Write(raw)
		return err
	}
	dir, err := dataDir(*data, env.Getenv)
	if err != nil {
		return err
	}
	abi, err := sandbox.LandlockCap(env.Getenv)
	if err != nil {
		return err
	}
	rep, err := doctorAs(ctx, self, filepath.Join(dir, "tmp"), abi)
	if err != nil {
		return err
	}
	if os.Geteuid() == 0 && env.Getenv("PROCTOR_DOCTOR_NESTED") == "" {
		rep.Nobody, rep.Skipped = doctorAsNobody(ctx, self, abi)
	}
	if needsAppArmor(rep) {
		rep.AppArmor = appArmorFix(ctx, self)
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printDoctor(env.Stdout, rep)
	}
	if rep.Refused != "" {
		return exitError{ExitProblems}
	}
	return nil
}

// appArmorFix is the AppArmor profile that lets the proctor binary self
// make user namespaces, checked with apparmor_parser where there is one.
func appArmorFix(ctx context.Context, self string) *doctorAppArmorFix {
	fix := &doctorAppArmorFix{Profile: sandbox.AppArmorProfile(self), Checked: "parses (apparmor_parser --skip-kernel-load)"}
	if err := sandbox.CheckAppArmorProfile(ctx, fix.Profile); errors.Is(err, exec.ErrNotFound) {
		fix.Checked = "not checked: this host has no apparmor_parser"
	} else if err != nil {
		fix.Checked = "does not parse here: " + err.Error()
	}
	return fix
}

// doctorAs surveys the walls as this process's user, and starts a confined
// `true` as a run's commands start.
func doctorAs(ctx context.Context, self, tmp string, abi int) (*doctorReport, error) {
	rep := &doctorReport{UID: os.Geteuid(), User: userName(os.Geteuid()), Kernel: kernel()}
	var err error
	if rep.Findings, err = sandbox.Survey(ctx, self, tmp, abi); err != nil {
		return nil, fmt.Errorf("doctor: %w", err)
	}
	if walls, err := sandbox.ProbeHost(ctx, self, tmp, abi, nil); err != nil {
		rep.Refused = err.Error()
	} else {
		w := bundle.Walls(walls)
		rep.Walls = &w
		rep.IDs = runIDs(ctx, self)
	}
	return rep, nil
}

// runIDs says which id a run would lease here, and why it would share the
// user's own.
func runIDs(ctx context.Context, self string) string {
	id, err := sandbox.LeaseID(ctx, self)
	if err != nil {
		return err.Error()
	}
	defer id.Release()
	if id.Own {
		return fmt.Sprintf("every run as the user's own id %d: %s", id.ID, id.Why)
	}
	return fmt.Sprintf("each run an id of its own (this one would get %s)", id)
}

// doctorAsNobody runs `proctor doctor --json` again as the user nobody, as
// a user who is not root runs proctor; skipped says why it could not.
func doctorAsNobody(ctx context.Context, self string, abi int) (*doctorReport, string) {
	home, err := os.MkdirTemp("", "proctor-doctor-")
	if err != nil {
		return nil, err.Error()
	}
	defer os.RemoveAll(home)
	os.Chown(home, 65534, 65534)
	cmd := proc.Command(ctx, self, "doctor", "--json", "--data", filepath.Join(home, "data"))
	cmd.Dir = home
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "PROCTOR_DOCTOR_NESTED=1"}
	if abi != 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("PROCTOR_LANDLOCK_ABI=%d", max(abi, 0)))
	}
	cmd.SysProcAttr = asUser(65534)
	out, err := cmd.Output()
	var rep doctorReport
	if jerr := json.Unmarshal(out, &rep); jerr != nil || len(rep.Findings) == 0 {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			err = fmt.Errorf("%v: %s", err, strings.TrimSpace(string(exit.Stderr)))
		}
		return nil, fmt.Sprintf("not tried as nobody: %s could not run as that user (%v); put the binary where every user may run it (go build -o /usr/local/bin/proctor ./cmd/proctor) and run proctor doctor as that user", self, err)
	}
	return &rep, ""
}

// needsAppArmor: a user who is not root could make a user namespace but
// not use it, or not make one, on a host with AppArmor.
func needsAppArmor(rep *doctorReport) bool {
	if _, err := os.Stat("/sys/kernel/security/apparmor"); err != nil {
		return false
	}
	r := rep
	if rep.Nobody != nil {
		r = rep.Nobody
	}
	if r.UID == 0 {
		return false
	}
	for _, f := range r.Findings {
		if f.Tried && !f.OK && (f.Wall == sandbox.WallNamespaces || f.Wall == sandbox.WallView) {
			return true
		}
	}
	return false
}

func printDoctor(w io.Writer, rep *doctorReport) {
	printDoctorUser(w, rep)
	if rep.Nobody != nil {
		fmt.Fprintln(w)
		printDoctorUser(w, rep.Nobody)
	} else if rep.Skipped != "" {
		fmt.Fprintf(w, "\nAs a user who is not root: %s\n", rep.Skipped)
	}
	if rep.AppArmor != nil {
		fmt.Fprintf(w, "\nThis host's AppArmor keeps a user who is not root from the sandbox. This profile (proctor doctor --apparmor-profile; %s) lets this binary make user namespaces:\n\n%s", rep.AppArmor.Checked, rep.AppArmor.Profile)
	}
	fmt.Fprintln(w)
	if rep.Refused != "" {
		fmt.Fprintf(w, "Runs with the sandbox on are refused here (exit 1): %s\n", rep.Refused)
		return
	}
	fmt.Fprintln(w, "Runs with the sandbox on start here.")
}

func printDoctorUser(w io.Writer, rep *doctorReport) {
	fmt.Fprintf(w, "As %s (uid %d), %s:\n", rep.User, rep.UID, rep.Kernel)
	for _, f := range rep.Findings {
		switch {
		case !f.Tried:
			fmt.Fprintf(w, "  %-13s not tried: %s\n", f.Wall, f.Detail)
		case f.OK && f.Detail != "":
			fmt.Fprintf(w, "  %-13s ok (%s)\n", f.Wall, f.Detail)
		case f.OK:
			fmt.Fprintf(w, "  %-13s ok\n", f.Wall)
		default:
			fmt.Fprintf(w, "  %-13s FAILED: %s\n  %-13s fix: %s\n", f.Wall, f.Detail, "", f.Fix)
		}
	}
	if rep.IDs != "" {
		fmt.Fprintf(w, "  %-13s %s\n", "ids", rep.IDs)
	}
	if rep.Walls != nil {
		fmt.Fprintf(w, "  a confined `true` started with: %s\n", rep.Walls)
	} else {
		fmt.Fprintf(w, "  a confined `true` did not start: %s\n", rep.Refused)
	}
}

func userName(uid int) string {
	switch uid {
	case 0:
		return "root"
	case 65534:
		return "nobody"
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return fmt.Sprintf("user %d", uid)
}
