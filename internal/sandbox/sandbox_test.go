package sandbox

import (
	"strings"
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
	p := Policy{Write: []string{"/ws", "/tmp/x"}, Read: []string{"/usr/local/go"}, Connect: []int{4000}, MaxFile: 10, CPU: 5}
	got := strings.Join(p.Command("/bin/proctor", []string{"bash", "-c", "echo --write /etc"}), " ")
	want := "/bin/proctor sandbox-exec --write /ws --write /tmp/x --read /usr/local/go --connect 4000 --max-file 10 --cpu 5 -- bash -c echo --write /etc"
	if got != want {
		t.Fatalf("Command:\n got %s\nwant %s", got, want)
	}
	// The helper refuses what it cannot apply, and runs nothing.
	for _, args := range [][]string{{"--connect", "http", "--", "true"}, {"--write", "/ws"}, {"--nope"}} {
		if err := Main(args, &strings.Builder{}); err == nil {
			t.Errorf("Main(%q) ran", args)
		}
	}
}
