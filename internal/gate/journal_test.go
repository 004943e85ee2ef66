package gate_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/gate"
	"github.com/proctor-dev/proctor/internal/patch"
)

// recorder collects Record calls, as an audit log keyed by op would.
type recorder struct {
	mu  sync.Mutex
	got []gate.Decided
}

func (r *recorder) record(_ context.Context, d gate.Decided) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, d)
	return nil
}

func TestRecoverFinishesAJournaledApproval(t *testing.T) {
	runDir, src := demoRun(t)
	before, _ := os.ReadFile(filepath.Join(src, "money.go"))
	o := opts(runDir)
	o.Actor = "ana"
	if err := gate.Stage(context.Background(), runDir, approve("ana"), o); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(filepath.Join(src, "money.go")); string(after) != string(before) {
		t.Fatal("staging touched the source")
	}
	var rec recorder
	d, err := gate.Recover(context.Background(), runDir, rec.record)
	if err != nil || d == nil || !d.Review.Applied {
		t.Fatalf("recover: %+v %v", d, err)
	}
	if data, _ := os.ReadFile(filepath.Join(src, "money.go")); !strings.Contains(string(data), "math.Round") {
		t.Fatal("recovery did not finish applying")
	}
	rc := receiptOf(t, runDir)
	if rc.Review == nil || !rc.Review.Applied || rc.Status != bundle.StatusPassed || countEvents(t, runDir, "review.decided") != 1 {
		t.Fatalf("receipt %+v", rc.Review)
	}
	if len(rec.got) != 1 || rec.got[0].Actor != "ana" {
		t.Fatalf("recorded %+v", rec.got)
	}
}

func TestRecoverRollsBackWhenTheSourceChanged(t *testing.T) {
	runDir, src := demoRun(t)
	if err := gate.Stage(context.Background(), runDir, approve("ana"), opts(runDir)); err != nil {
		t.Fatal(err)
	}
	// Someone edits the file after the crash, before the restart.
	os.WriteFile(filepath.Join(src, "money.go"), []byte("package money\n// a person's edit\n"), 0o644)
	var rec recorder
	d, err := gate.Recover(context.Background(), runDir, rec.record)
	if err != nil || d == nil || !d.RolledBack || d.Action() != "approve-rolled-back" {
		t.Fatalf("recover: %+v %v", d, err)
	}
	if data, _ := os.ReadFile(filepath.Join(src, "money.go")); !strings.Contains(string(data), "a person's edit") {
		t.Fatal("the person's edit was overwritten")
	}
	rc := receiptOf(t, runDir)
	if rc.Review != nil || rc.Status != bundle.StatusAwaitingReview || countEvents(t, runDir, "review.rolled_back") != 1 {
		t.Fatalf("receipt %+v", rc.Review)
	}
}

func TestARecordThatFailedIsMadeAtRecovery(t *testing.T) {
	runDir, _ := demoRun(t)
	o := opts(runDir)
	o.Record = func(context.Context, gate.Decided) error { return errors.New("database is locked") }
	if _, err := gate.Review(context.Background(), runDir, approve("ana"), o); err == nil || !strings.Contains(err.Error(), "database is locked") {
		t.Fatalf("review: %v", err)
	}
	if rc := receiptOf(t, runDir); rc.Review == nil || !rc.Review.Applied {
		t.Fatal("the decision is not on the receipt")
	}
	var rec recorder
	for range 2 {
		if _, err := gate.Recover(context.Background(), runDir, rec.record); err != nil {
			t.Fatal(err)
		}
	}
	if len(rec.got) != 1 || !rec.got[0].Review.Approved {
		t.Fatalf("recorded %+v, want once", rec.got)
	}
}

// TestReviewChild is the process TestKill9DuringReview kills: it approves
// (and rejects) one run from several goroutines at once, recording each
// decision's op in a file.
func TestReviewChild(t *testing.T) {
	runDir := os.Getenv("PROCTOR_GATE_CHILD_RUN")
	if runDir == "" {
		t.Skip("run by TestKill9DuringReview")
	}
	o := opts(runDir)
	o.Record = fileRecorder(os.Getenv("PROCTOR_GATE_CHILD_AUDIT"))
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Go(func() {
			rv := approve(fmt.Sprint("r", i))
			parts := os.Getenv("PROCTOR_GATE_CHILD_PARTS") != ""
			if parts { // partsRun's: two of notes.txt's three hunks, by every reviewer (so that the kills fall in applying)
				rv = approveParts(fmt.Sprint("r", i), patch.Choice{File: 1, Hunk: 0, Accept: true}, patch.Choice{File: 1, Hunk: 2, Accept: true})
			}
			if i == 4 && !parts {
				rv = gate.ReviewerFunc(func(context.Context, gate.Proposal) (gate.Verdict, error) {
					return gate.Verdict{By: "bo", Reason: "no"}, nil
				})
			}
			gate.Review(context.Background(), runDir, rv, o)
		})
	}
	wg.Wait()
}

// fileRecorder appends each decision's op to a file (an audit log).
func fileRecorder(path string) func(context.Context, gate.Decided) error {
	return func(_ context.Context, d gate.Decided) error {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = fmt.Fprintf(f, "%s %s\n", d.Op, d.Action())
		if err == nil {
			err = f.Sync()
		}
		return err
	}
}

// 10 rounds of kill -9 of a process in the middle of concurrent reviews
// once left stale locks, diffs applied with no review recorded, reviews in
// the events but not the receipt, and reviews with no audit entry. After
// a kill at any point and a recovery, the receipt says what happened to the
// source, and the audit log has exactly one entry per recorded review.
//
// The same holds for an approval part by part (two of three hunks of one
// file accepted, a new file not): the source is the base or has exactly the
// accepted parts.
func TestKill9DuringReview(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes")
	}
	t.Run("whole", func(t *testing.T) {
		kill9DuringReview(t, demoRun, "", func(src string) (bool, error) {
			data, err := os.ReadFile(filepath.Join(src, "money.go"))
			return strings.Contains(string(data), "math.Round"), err
		})
	})
	t.Run("parts", func(t *testing.T) {
		kill9DuringReview(t, partsRun, "1", func(src string) (bool, error) {
			data, err := os.ReadFile(filepath.Join(src, "notes.txt"))
			lines := strings.Split(string(data), "\n")
			if _, nerr := os.Stat(filepath.Join(src, "new.txt")); nerr == nil {
				return false, errors.New("new.txt, whose part was not accepted, was written")
			}
			applied := lines[1] == "line 2 changed" && lines[37] == "line 38 changed"
			if lines[19] != "line 20" || applied != (lines[1] == "line 2 changed") || applied != (lines[37] == "line 38 changed") {
				return false, fmt.Errorf("notes.txt is neither the base nor the accepted parts:\n%s", data)
			}
			return applied, err
		})
	})
}

// kill9DuringReview kills, in rounds, a child that reviews a run made by
// newRun (parts: approving part by part), and checks after each recovery
// that the receipt says what patched (reading the source) finds.
func kill9DuringReview(t *testing.T, newRun func(*testing.T) (string, string), parts string, patched func(src string) (bool, error)) {
	child := func(runDir, auditLog string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestReviewChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "PROCTOR_GATE_CHILD_RUN="+runDir, "PROCTOR_GATE_CHILD_AUDIT="+auditLog, "PROCTOR_GATE_CHILD_PARTS="+parts)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	// How long a child takes when nobody kills it: the kills fall anywhere
	// in twice that time.
	runDir, _ := newRun(t)
	start := time.Now()
	if err := child(runDir, filepath.Join(t.TempDir(), "audit.log")).Wait(); err != nil {
		t.Fatal(err)
	}
	whole := time.Since(start)
	rounds := 20
	var applied, rejected, untouched, recovered int
	for round := range rounds {
		runDir, src := newRun(t)
		auditLog := filepath.Join(t.TempDir(), "audit.log")
		cmd := child(runDir, auditLog)
		time.Sleep(time.Duration(rand.Int64N(2 * int64(whole)))) // some rounds end before their kill
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		// The restart's recovery, then the invariants.
		settled, errs := gate.RecoverAll(context.Background(), filepath.Dir(runDir), fileRecorder(auditLog))
		if len(errs) > 0 {
			t.Fatalf("round %d: recover: %v", round, errs)
		}
		recovered += len(settled)
		patched, err := patched(src)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		rc := receiptOf(t, runDir)
		decided := countEvents(t, runDir, "review.decided")
		switch {
		case rc.Review == nil:
			untouched++
			if patched || decided != 0 {
				t.Fatalf("round %d: no review on the receipt, but patched=%v and %d review events", round, patched, decided)
			}
		case rc.Review.Applied:
			applied++
			if !patched || decided != 1 || rc.Status != bundle.StatusPassed {
				t.Fatalf("round %d: the receipt says applied; patched=%v, %d review events, status %s", round, patched, decided, rc.Status)
			}
		default:
			rejected++
			if patched || decided != 1 {
				t.Fatalf("round %d: the receipt says not applied; patched=%v, %d review events", round, patched, decided)
			}
		}
		ops := map[string]bool{}
		if f, err := os.Open(auditLog); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				ops[strings.Fields(sc.Text())[0]] = true
			}
			f.Close()
		}
		if want := map[bool]int{true: 1, false: 0}[rc.Review != nil]; len(ops) != want {
			t.Fatalf("round %d: %d audited reviews, want %d", round, len(ops), want)
		}
		if left, _ := filepath.Glob(filepath.Join(runDir, ".review*")); len(left) != 0 {
			t.Fatalf("round %d: journal left after recovery: %v", round, left)
		}
		if parts != "" && rc.Review != nil && rc.Review.Approved && len(rc.Review.AppliedParts) != 2 {
			t.Fatalf("round %d: applied parts %+v, want the two accepted", round, rc.Review.AppliedParts)
		}
		// Nothing is left locked: the next review goes through at once.
		_, err = gate.Review(context.Background(), runDir, approve("next"), opts(runDir))
		if rc.Review == nil && err != nil {
			t.Fatalf("round %d: the next review after the crash: %v", round, err)
		}
		if rc.Review != nil && !errors.Is(err, gate.ErrAlreadyReviewed) {
			t.Fatalf("round %d: the next review of a reviewed run: %v", round, err)
		}
	}
	t.Logf("%d rounds killed within twice a child's %s: %d applied, %d rejected, %d killed before a decision was journaled; %d journals finished by recovery", rounds, whole, applied, rejected, untouched, recovered)
}
