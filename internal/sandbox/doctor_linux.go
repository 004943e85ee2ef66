package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/proctor-dev/proctor/internal/proc"
	"golang.org/x/sys/unix"
)

// Survey tries every wall of the sandbox on this host as this user — the
// namespaces by starting the helper in them, then inside each step of the
// init (the view, its /proc, a toolchain cache as an overlay with its upper
// folder in dir, the network, the keyring, dropping capabilities, Landlock,
// seccomp), going on past a step that fails — and says how each went, with
// the fix for each that failed. The kernel answers, not its settings.
func Survey(ctx context.Context, helper, dir string, landlockCap int) ([]Finding, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("survey the sandbox: %w", err)
	}
	work, err := os.MkdirTemp(dir, "survey-")
	if err != nil {
		return nil, fmt.Errorf("survey the sandbox: %w", err)
	}
	defer os.RemoveAll(work)
	os.Chmod(work, 0o755)
	conf := &Confinement{Helper: helper, survey: true, Policy: Policy{Write: []string{work}, LandlockABI: landlockCap,
		Caches: []Cache{{At: filepath.Join(work, "cache"), Upper: filepath.Join(work, "upper")}}}}
	// A guard against an init that hangs, not a measure: on a slow host (an
	// emulated CPU, a loaded CI runner) a survey takes more than a minute.
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	findings, err := runSurvey(ctx, Command{Argv: []string{"true"}, Dir: work, Confine: conf})
	if err != nil {
		// No namespaces: the walls that need none are tried in a plain
		// child, the rest cannot be.
		findings = []Finding{{Wall: WallNamespaces, Tried: true, Detail: err.Error(), Errno: errnoOf(err)}}
		for _, w := range []Wall{WallLimits, WallView, WallProc, WallCaches, WallNetwork, WallKeyring, WallCapabilities} {
			findings = append(findings, Finding{Wall: w, Detail: "it needs the namespaces"})
		}
		plain := proc.Command(ctx, helper, "sandbox-exec", "--survey", "--report-fd", "3", "--landlock-abi", fmt.Sprint(landlockCap), "--", "true")
		more, err := runSurveyCmd(plain)
		if err != nil {
			return nil, fmt.Errorf("survey Landlock and seccomp: %w", err)
		}
		findings = append(findings, more...)
	} else if caches := failed(findings, WallCaches); caches != nil {
		// A data folder that cannot hold the overlays leaves the run plain
		// caches (as a run's probe does): the rest of the walls are
		// tried again without them, past a view that stopped at them.
		conf.Policy.Caches = nil
		again, err := runSurvey(ctx, Command{Argv: []string{"true"}, Dir: work, Confine: conf})
		if err != nil {
			return nil, fmt.Errorf("survey the sandbox without caches: %w", err)
		}
		findings = append([]Finding{*caches}, again...)
	}
	findings = everyWall(findings)
	for i, f := range findings {
		if f.Wall == WallLandlock && f.OK {
			findings[i].Detail = "none: this kernel gives no Landlock (the other walls hold without it)"
			if abi := landlockABI(landlockCap); abi > 0 {
				findings[i].Detail = fmt.Sprintf("ABI %d: %s", abi, strings.Join(LandlockScopes(abi), ", "))
			}
		}
		if f.Tried && !f.OK {
			findings[i].Fix = (&StartError{Wall: f.Wall, Err: reported{f.Detail, syscall.Errno(f.Errno)}}).Fix()
		}
	}
	return findings, nil
}

// failed is the failed finding of wall, nil when it did not fail.
func failed(findings []Finding, wall Wall) *Finding {
	for _, f := range findings {
		if f.Wall == wall && f.Tried && !f.OK {
			return &f
		}
	}
	return nil
}

// runSurvey starts a surveying init as c's command would start, and reads
// its findings; an error is the namespaces that could not be made.
func runSurvey(ctx context.Context, c Command) ([]Finding, error) {
	cmd, alive, report, _, err := c.build(ctx) // a survey runs as the user's own id
	if err != nil {
		return nil, err
	}
	defer alive.Close()
	defer report.Close()
	var out boundedOutput
	out.max = 1 << 16
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Start()
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
	if err != nil {
		return nil, err
	}
	cmd.Wait()
	return readSurvey(report, &out)
}

// runSurveyCmd runs a plain surveying helper (no namespaces) and reads its
// findings from its fd 3.
func runSurveyCmd(cmd *exec.Cmd) ([]Finding, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cmd.ExtraFiles = []*os.File{w}
	var out boundedOutput
	out.max = 1 << 16
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Start()
	w.Close()
	if err != nil {
		return nil, err
	}
	cmd.Wait()
	return readSurvey(r, &out)
}

func readSurvey(r io.Reader, out *boundedOutput) ([]Finding, error) {
	raw, _ := io.ReadAll(io.LimitReader(r, 1<<16))
	var rep struct {
		Findings []Finding `json:"findings"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil || len(rep.Findings) == 0 {
		printed, _ := out.bytes()
		return nil, fmt.Errorf("the helper said nothing of the walls: %s", printed)
	}
	return rep.Findings, nil
}

// sendSurvey writes the findings of a survey and closes the pipe.
func sendSurvey(w io.WriteCloser, findings []Finding) {
	for i := range findings {
		findings[i].Tried = true
	}
	raw, _ := json.Marshal(struct {
		Findings []Finding `json:"findings"`
	}{findings})
	w.Write(append(raw, '\n'))
	w.Close()
}

// surveyPlain is `sandbox-exec --survey` outside any namespace: it tries
// the walls that need none — Landlock and seccomp — and reports them.
func surveyPlain(in invocation) (int, error) {
	if in.report < 0 {
		return 0, errors.New("--survey needs --report-fd")
	}
	runtime.LockOSThread()
	var findings []Finding
	try := func(w Wall, err error) {
		f := Finding{Wall: w, OK: err == nil}
		if err != nil {
			f.Detail = err.Error()
			f.Errno = errnoOf(err)
		}
		findings = append(findings, f)
	}
	err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
	if abi := landlockABI(in.policy.LandlockABI); err == nil && abi > 0 {
		try(WallLandlock, in.policy.restrict(abi))
	} else {
		try(WallLandlock, err)
	}
	if err == nil {
		err = applySeccomp()
	}
	try(WallSeccomp, err)
	sendSurvey(os.NewFile(uintptr(in.report), "report"), findings)
	return 0, nil
}
