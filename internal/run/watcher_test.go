package run

import (
	"testing"

	"github.com/proctor-dev/proctor/internal/proxy"
)

// An approval names the call it asks about (Claude Code's hook), names it
// by an id of the agent's own (Qwen Code's) or not at all (Gemini CLI's,
// Copilot CLI's): each is tied to the open call that does what it asks,
// in the order the model made them, each call once, so the page says
// "approved by …" beside it.
func TestAnApprovalIsTiedToTheCallItAsksAbout(t *testing.T) {
	w := &watcher{open: map[string]string{}, args: map[string]string{}, asked: map[string]bool{}}
	for _, c := range [][3]string{
		{"c1", "run_shell_command", `{"command":"go test ./...","description":"x"}`},
		{"c2", "run_shell_command", `{"command":"go vet ./..."}`},
		{"c3", "run_shell_command", `{"command":"go test ./..."}`},
		{"c4", "read_file", `{"file_path":"/ws/a.txt"}`},
	} {
		w.open[c[0]], w.args[c[0]] = c[1], c[2]
		w.order = append(w.order, c[0])
	}
	for _, tc := range []struct {
		req  proxy.Approval
		want string
	}{
		{proxy.Approval{CallID: "c2", Tool: "run_command", Arguments: `{"command":"go vet ./..."}`}, "c2"},
		{proxy.Approval{Tool: "run_command", Arguments: `{"command":"go test ./..."}`}, "c1"},
		{proxy.Approval{CallID: "qwen-7", Tool: "run_command", Arguments: `{"command":"go test ./..."}`}, "c3"},
		{proxy.Approval{Tool: "run_command", Arguments: `{"command":"go test ./..."}`}, ""}, // both asked already
		{proxy.Approval{Tool: "run_command", Arguments: `{"command":"rm -rf /"}`}, ""},
		{proxy.Approval{Tool: "read_file", Arguments: `{"file_path":"/ws/a.txt"}`}, "c4"},
	} {
		if got := w.callOf(tc.req); got != tc.want {
			t.Errorf("%+v: tied to %q, want %q", tc.req, got, tc.want)
		}
	}
}
