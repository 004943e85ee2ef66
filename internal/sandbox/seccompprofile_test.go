package sandbox

import (
	"encoding/json"
	"slices"
	"testing"
)

// The profile is Docker's default, rule for rule, but for the clone rules
// that refuse namespace flags, with one rule that allows the sandbox's
// system calls and nothing else.
func TestTheDockerProfileIsDockersDefaultAndOneRule(t *testing.T) {
	raw, err := DockerSeccompProfile()
	if err != nil {
		t.Fatal(err)
	}
	type rule struct {
		Names  []string          `json:"names"`
		Action string            `json:"action"`
		Args   []json.RawMessage `json:"args"`
	}
	var got, base struct {
		DefaultAction string `json:"defaultAction"`
		Syscalls      []rule `json:"syscalls"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(dockerDefault, &base); err != nil {
		t.Fatal(err)
	}
	if got.DefaultAction != base.DefaultAction || got.DefaultAction != "SCMP_ACT_ERRNO" {
		t.Fatalf("default action %q, Docker's %q", got.DefaultAction, base.DefaultAction)
	}
	var dropped int
	for _, r := range base.Syscalls {
		if slices.Equal(r.Names, []string{"clone"}) && len(r.Args) > 0 {
			dropped++
		}
	}
	if dropped == 0 || len(got.Syscalls) != len(base.Syscalls)-dropped+1 {
		t.Fatalf("%d rules, Docker's %d less %d clone rules, plus one", len(got.Syscalls), len(base.Syscalls), dropped)
	}
	last := got.Syscalls[len(got.Syscalls)-1]
	if !slices.Equal(last.Names, sandboxSyscalls) || last.Action != "SCMP_ACT_ALLOW" || len(last.Args) != 0 {
		t.Fatalf("the added rule: %+v", last)
	}
	var kept []rule
	for _, r := range base.Syscalls {
		if !(slices.Equal(r.Names, []string{"clone"}) && len(r.Args) > 0) {
			kept = append(kept, r)
		}
	}
	for i, r := range kept {
		g := got.Syscalls[i]
		if !slices.Equal(g.Names, r.Names) || g.Action != r.Action || len(g.Args) != len(r.Args) {
			t.Fatalf("rule %d is not Docker's: %+v, Docker's %+v", i, g, r)
		}
	}
}
