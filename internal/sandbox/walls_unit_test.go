package sandbox

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

// Each wall that fails comes with what to change on the host, by the
// kernel's answer; on a system that is not Linux, what to use instead.
func TestEachFailedWallSaysWhatToChange(t *testing.T) {
	for _, tc := range []struct {
		goos  string
		wall  Wall
		errno syscall.Errno
		want  string
	}{
		{"darwin", WallNamespaces, 0, "--sandbox off"},
		{"windows", WallNamespaces, 0, "WSL2"},
		{"linux", WallNamespaces, syscall.ENOSPC, "user.max_user_namespaces"},
		{"linux", WallNamespaces, syscall.EINVAL, "CONFIG_USER_NS"},
		{"linux", WallView, syscall.ENOSYS, "Linux 5.12"},
		{"linux", WallProc, syscall.EPERM, "systempaths=unconfined"},
		{"linux", WallCaches, syscall.EINVAL, "data folder"},
		{"linux", WallSeccomp, syscall.EINVAL, "CONFIG_SECCOMP_FILTER"},
		{"linux", WallKeyring, syscall.EPERM, "proctor doctor --seccomp-profile"},
	} {
		e := &StartError{Wall: tc.wall, Err: reported{"it failed", tc.errno}}
		if got := e.fixOn(tc.goos); !strings.Contains(got, tc.want) {
			t.Errorf("%s %s %v: %q does not say %q", tc.goos, tc.wall, tc.errno, got, tc.want)
		}
	}
}

// The init's report reads back as the walls, or as the wall that failed
// with its errno; an init that said nothing is a StartError too.
func TestTheInitsReportReadsBack(t *testing.T) {
	var b strings.Builder
	sendReport(nopCloser{&b}, &Walls{Namespaces: Namespaces, Seccomp: true, LandlockABI: 2, Landlock: LandlockScopes(2)}, nil)
	w, err := readReport(strings.NewReader(b.String()), nil)
	if err != nil || w.LandlockABI != 2 || len(w.Landlock) != 2 || !w.Seccomp {
		t.Fatalf("%+v %v", w, err)
	}
	b.Reset()
	sendReport(nopCloser{&b}, nil, atWall(WallProc, &wrapped{syscall.EPERM}))
	_, err = readReport(strings.NewReader(b.String()), nil)
	var se *StartError
	if !errors.As(err, &se) || se.Wall != WallProc || !errors.Is(err, syscall.EPERM) {
		t.Fatalf("%v", err)
	}
	_, err = readReport(strings.NewReader(""), []byte("killed"))
	if !errors.As(err, &se) || se.Wall != WallInit || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("%v", err)
	}
}

type nopCloser struct{ *strings.Builder }

func (nopCloser) Close() error { return nil }

type wrapped struct{ err error }

func (w *wrapped) Error() string { return "mount proc: " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }
