package runview

import (
	"context"
	"fmt"
	"reflect"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/patch"
)

// Pair is two runs side by side — of one scenario in two suites, say: their
// checks by name, their diffs by file, their transcripts turn by turn.
type Pair struct {
	A, B   *View
	Checks []CheckPair
	Files  []FilePair
	Turns  []TurnPair
}

// CheckPair is a check of either run: its result in each (nil: the run
// has no such check).
type CheckPair struct {
	Phase, Name string
	A, B        *bundle.CheckResult
	Differ      bool // the two judged it differently, or one lacks it
}

// FilePair is a file either run's diff changes: its index in each run's
// Files (-1: that run did not change it).
type FilePair struct {
	Path string
	A, B int
	Same bool // both changed it the same way
}

// TurnPair is the n-th turn (from 1) of each run: a model call's
// assistant message with the messages that led to it (the task, a user's
// next message) and the tool results it got. A run with fewer turns has
// none (nil) there.
type TurnPair struct {
	N    int
	A, B []Message
}

// Pair reads runs a and b (store.ErrNotFound when one is not indexed) and
// lays them side by side.
func (s *Service) Pair(ctx context.Context, a, b string) (*Pair, error) {
	va, err := s.Run(ctx, a)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", a, err)
	}
	vb, err := s.Run(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", b, err)
	}
	return Align(va, vb), nil
}

// Align lays two read runs side by side.
func Align(a, b *View) *Pair {
	p := &Pair{A: a, B: b, Checks: alignChecks(a.Run.Checks, b.Run.Checks), Files: alignFiles(a.Files, b.Files)}
	ta, tb := Turns(a.Transcript), Turns(b.Transcript)
	for i := range max(len(ta), len(tb)) {
		tp := TurnPair{N: i + 1}
		if i < len(ta) {
			tp.A = ta[i]
		}
		if i < len(tb) {
			tp.B = tb[i]
		}
		p.Turns = append(p.Turns, tp)
	}
	return p
}

func alignChecks(a, b []bundle.CheckResult) []CheckPair {
	var out []CheckPair
	at := map[[2]string]int{}
	for i := range a {
		at[[2]string{a[i].Phase, a[i].Name}] = len(out)
		out = append(out, CheckPair{Phase: a[i].Phase, Name: a[i].Name, A: &a[i], Differ: true})
	}
	for i := range b {
		k := [2]string{b[i].Phase, b[i].Name}
		j, ok := at[k]
		if !ok {
			out = append(out, CheckPair{Phase: b[i].Phase, Name: b[i].Name, B: &b[i], Differ: true})
			continue
		}
		out[j].B = &b[i]
		out[j].Differ = out[j].A.Passed != b[i].Passed || out[j].A.Broken != b[i].Broken
	}
	return out
}

func alignFiles(a, b []patch.File) []FilePair {
	var out []FilePair
	at := map[string]int{}
	for i, f := range a {
		at[f.Path()] = len(out)
		out = append(out, FilePair{Path: f.Path(), A: i, B: -1})
	}
	for i, f := range b {
		j, ok := at[f.Path()]
		if !ok {
			out = append(out, FilePair{Path: f.Path(), A: -1, B: i})
			continue
		}
		out[j].B = i
		out[j].Same = reflect.DeepEqual(a[out[j].A], f)
	}
	return out
}

// Turns splits a transcript into turns: each model call's assistant
// message, with the messages before it since the last turn (the task, a
// user's next message) and the tool results after it.
func Turns(msgs []Message) [][]Message {
	var out [][]Message
	var cur []Message
	answered := false // cur holds an assistant message
	for _, m := range msgs {
		starts := answered && (m.Role == "assistant" || m.Role == "user" || m.Role == "system")
		if starts {
			out = append(out, cur)
			cur, answered = nil, false
		}
		cur = append(cur, m)
		answered = answered || m.Role == "assistant"
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
