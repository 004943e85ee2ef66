package sandbox

import (
	"context"
	"fmt"
	"os/exec"
	"strings"

	"github.com/proctor-dev/proctor/internal/proc"
)

// Finding is how one wall of the sandbox went on this host.
type Finding struct {
	Wall   Wall   `json:"wall"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"` // the error, when it failed
	Errno  int    `json:"errno,omitempty"`
	Fix    string `json:"fix,omitempty"` // what to change on the host, when it failed
	// Tried is false for a wall that could not be tried (no namespaces to
	// try it in).
	Tried bool `json:"tried"`
}

// SurveyedWalls are the walls a survey reports, in the order the init puts
// them up.
var SurveyedWalls = []Wall{WallNamespaces, WallLimits, WallView, WallProc, WallCaches, WallNetwork, WallKeyring, WallCapabilities, WallLandlock, WallSeccomp}

// everyWall is one finding for each wall, in order: a wall of several
// steps with its first failure; the namespaces held when the init started
// in them; the view's parts (its /proc, the caches) that a failure of the
// view left untried, and Landlock, whose rules name the view's folders,
// said so.
func everyWall(findings []Finding) []Finding {
	by := map[Wall]Finding{}
	for _, f := range findings {
		if prev, ok := by[f.Wall]; !ok || (prev.OK && !f.OK) {
			by[f.Wall] = f
		}
	}
	var view *Finding
	for _, w := range []Wall{WallView, WallProc} {
		if f, ok := by[w]; ok && f.Tried && !f.OK && view == nil {
			view = &f
		}
	}
	var out []Finding
	for _, w := range SurveyedWalls {
		f, ok := by[w]
		switch {
		case view != nil && w != view.Wall && (w == WallProc || w == WallCaches || w == WallLandlock):
			f = Finding{Wall: w, Detail: "the view failed before it (" + string(view.Wall) + ")"}
		case ok:
		default:
			f = Finding{Wall: w, OK: true, Tried: true}
		}
		out = append(out, f)
	}
	return out
}

// AppArmorProfile is the AppArmor profile that lets binary (the proctor
// binary, by its real path) make the user namespaces of its sandbox on a
// host whose AppArmor restricts unprivileged user namespaces (Ubuntu 23.10
// and later: kernel.apparmor_restrict_unprivileged_userns=1). It adds no
// rule but `userns`: the program stays unconfined otherwise.
func AppArmorProfile(binary string) string {
	return fmt.Sprintf(`# /etc/apparmor.d/proctor — lets %[1]s make the user namespaces of its sandbox
# (Ubuntu 23.10 and later restrict them for programs without a profile).
# Install: sudo install -m 644 THIS_FILE /etc/apparmor.d/proctor && sudo apparmor_parser -r /etc/apparmor.d/proctor
abi <abi/4.0>,
include <tunables/global>

profile proctor %[1]s flags=(unconfined) {
  userns,

  include if exists <local/proctor>
}
`, binary)
}

// CheckAppArmorProfile parses profile with the host's apparmor_parser
// without loading it: nil when it parses, the parser's word when not, and
// exec.ErrNotFound when the host has no apparmor_parser.
func CheckAppArmorProfile(ctx context.Context, profile string) error {
	parser, err := exec.LookPath("apparmor_parser")
	if err != nil {
		return err
	}
	cmd := proc.Command(ctx, parser, "--skip-kernel-load", "--skip-cache", "--quiet")
	cmd.Stdin = strings.NewReader(profile)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", parser, err, out)
	}
	return nil
}
