package runview

import (
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/store"
)

func msgs(roles ...string) []Message {
	var out []Message
	for i, r := range roles {
		out = append(out, Message{TranscriptSection: bundle.TranscriptSection{Role: r, Title: r + " " + string(rune('a'+i))}})
	}
	return out
}

func TestTurnsEndAtEachModelCall(t *testing.T) {
	cases := []struct {
		roles []string
		want  string // turns' titles, | between turns
	}{
		{nil, ""},
		{[]string{"system", "user", "assistant"}, "system a,user b,assistant c"},
		{[]string{"system", "user", "assistant", "tool", "tool", "assistant", "tool", "assistant"}, "system a,user b,assistant c,tool d,tool e|assistant f,tool g|assistant h"},
		// A second conversation turn starts a model turn with its message.
		{[]string{"user", "assistant", "user", "assistant", "tool"}, "user a,assistant b|user c,assistant d,tool e"},
		// A run that stopped before the model answered.
		{[]string{"system", "user"}, "system a,user b"},
	}
	for _, c := range cases {
		var got []string
		for _, turn := range Turns(msgs(c.roles...)) {
			var titles []string
			for _, m := range turn {
				titles = append(titles, m.Title)
			}
			got = append(got, strings.Join(titles, ","))
		}
		if strings.Join(got, "|") != c.want {
			t.Errorf("%v: %q, want %q", c.roles, strings.Join(got, "|"), c.want)
		}
	}
}

func TestAlignPairsChecksFilesAndTurns(t *testing.T) {
	file := func(path string, added int) patch.File {
		return patch.File{OldPath: path, NewPath: path, Added: added, Hunks: []patch.Hunk{{Header: "@@ -1 +1 @@", After: 1}}}
	}
	a := &View{Run: &store.RunDetail{Checks: []bundle.CheckResult{{Phase: "post", Name: "tests", Passed: true}, {Phase: "post", Name: "scope", Passed: true}, {Phase: "pre", Name: "only-a", Passed: true}}},
		Files:      []patch.File{file("a.go", 1), file("same.go", 2), file("only-a.go", 1)},
		Transcript: msgs("system", "user", "assistant", "tool", "assistant")}
	b := &View{Run: &store.RunDetail{Checks: []bundle.CheckResult{{Phase: "post", Name: "scope", Passed: true}, {Phase: "post", Name: "tests", Passed: false}, {Phase: "post", Name: "only-b", Broken: true}}},
		Files:      []patch.File{file("same.go", 2), file("a.go", 3), file("only-b.go", 1)},
		Transcript: msgs("system", "user", "assistant", "tool", "assistant", "tool", "assistant")}
	p := Align(a, b)

	var checks []string
	for _, c := range p.Checks {
		checks = append(checks, c.Phase+"."+c.Name+map[bool]string{true: "!", false: ""}[c.Differ])
	}
	if strings.Join(checks, " ") != "post.tests! post.scope pre.only-a! post.only-b!" {
		t.Fatalf("checks %v", checks)
	}
	if p.Checks[0].A == nil || p.Checks[0].B == nil || p.Checks[0].B.Passed || p.Checks[2].B != nil || p.Checks[3].A != nil {
		t.Fatalf("check sides %+v", p.Checks)
	}
	var files []string
	for _, f := range p.Files {
		files = append(files, f.Path+map[bool]string{true: "=", false: ""}[f.Same])
	}
	if strings.Join(files, " ") != "a.go same.go= only-a.go only-b.go" || p.Files[0].A != 0 || p.Files[0].B != 1 || p.Files[2].B != -1 || p.Files[3].A != -1 {
		t.Fatalf("files %v %+v", files, p.Files)
	}
	if len(p.Turns) != 3 || len(p.Turns[0].A) != 4 || len(p.Turns[1].A) != 1 || p.Turns[2].A != nil || len(p.Turns[2].B) != 1 || p.Turns[2].N != 3 {
		t.Fatalf("turns %+v", p.Turns)
	}
}
