package redact

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"
)

// naiveMayHold is the plain way: one scan of b per value and literal. It is
// the reference mayHold must agree with, and the benchmark's baseline.
func naiveMayHold(r *Redactor, b []byte) bool {
	for _, l := range r.lits {
		if bytes.Contains(b, []byte(l)) {
			return true
		}
	}
	return false
}

// mayHold agrees with the plain scan on random text with literals and
// values planted at random places, at the edges too; and whatever String
// changes, mayHold flags.
func TestMayHoldAgreesWithAPlainScan(t *testing.T) {
	r := FromEnv([]string{"OPENAI_API_KEY=sk-test-value-123456"}, "literal-secret-xyz")
	rng := rand.New(rand.NewSource(7))
	pieces := append([]string{"hello ", "\"content\":", "search ", "bearer", "Bearer abcdefghijklmnopqrstuvwx", "xox", "AK", "pt", "e", "s", "sk-", "ghp_", "literal-secret-xy"}, r.lits...)
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for range rng.Intn(8) {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		s := b.String()
		if got, want := mayHold(r, s), naiveMayHold(r, []byte(s)); got != want {
			t.Fatalf("mayHold(%q) = %v, the plain scan says %v", s, got, want)
		}
		if r.String(s) != s && !mayHold(r, s) {
			t.Fatalf("String changes %q but mayHold missed it", s)
		}
	}
}

// BenchmarkMayHold compares the one-pass prefilter with one scan per
// literal, on a chat completion request of ~5 KB with no secret in it.
func BenchmarkMayHold(b *testing.B) {
	r := FromEnv([]string{"OPENAI_API_KEY=sk-test-value-123456", "GITHUB_TOKEN=ghp_notreallyatokenvalue"})
	var body strings.Builder
	body.WriteString(`{"model":"m","messages":[{"role":"system","content":"You are a careful coding agent working in a copy of a repository (your working folder). Use the tools to read and change files; paths are relative to the working folder. Keep changes minimal and inside the task's scope."}`)
	for body.Len() < 5000 {
		body.WriteString(`,{"type":"function","function":{"name":"search","description":"Search the working folder for a regular expression; returns matching lines with their paths and line numbers.","parameters":{"type":"object","properties":{"pattern":{"type":"string"}}}}}`)
	}
	data := []byte(body.String())
	var naive, fast float64
	b.Run("plain", func(b *testing.B) {
		for range b.N {
			if naiveMayHold(r, data) {
				b.Fatal("flagged")
			}
		}
		naive = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("one-pass", func(b *testing.B) {
		for range b.N {
			if mayHold(r, data) {
				b.Fatal("flagged")
			}
		}
		fast = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		if naive > 0 {
			b.ReportMetric(fast/naive, "ratio-to-plain")
		}
	})
}

// Redactors made at once, with and without values of their own, do not
// share what they must not (run with -race).
func TestRedactorsMadeConcurrently(t *testing.T) {
	done := make(chan bool)
	for i := range 8 {
		go func() {
			var r *Redactor
			if i%2 == 0 {
				r = New("value-of-goroutine-" + strings.Repeat("x", i))
			} else {
				r = New()
			}
			done <- r.String("token ghp_abcdefghijklmnopqrstuvwxyz0123456789 here") == "token [REDACTED] here"
		}()
	}
	for range 8 {
		if !<-done {
			t.Fatal("a redactor made concurrently missed a secret")
		}
	}
	if New("abcdefgh").String("x abcdefgh y") != "x [REDACTED] y" || New().String("x abcdefgh y") != "x abcdefgh y" {
		t.Fatal("a value of one redactor leaked into another's table")
	}
}
