package push_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/push"
	"github.com/proctor-dev/proctor/internal/store/storetest"
)

// writeRun writes a small valid run bundle in dir/id.
func writeRun(t testing.TB, dir, id string) string {
	t.Helper()
	run := filepath.Join(dir, id)
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	end := start.Add(time.Second)
	r := &bundle.Receipt{Schema: bundle.ReceiptSchema, RunID: id, Kind: bundle.KindTask, Status: bundle.StatusPassed, Stage: bundle.StageCompleted,
		Task: "t", Source: bundle.Source{Kind: "local", Path: "/src"}, Model: bundle.Model{Name: "m"}, StartedAt: start, EndedAt: &end}
	if err := bundle.WriteReceipt(run, r); err != nil {
		t.Fatal(err)
	}
	return run
}

// packOf packs runs ids into a new pack and returns its bytes and digest.
func packOf(t testing.TB, ids ...string) ([]byte, string) {
	t.Helper()
	dir := t.TempDir()
	w, err := bundle.CreatePack(filepath.Join(dir, "p.tar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if err := w.Add(writeRun(t, dir, id), id); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	return data, digestOf(data)
}

func digestOf(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func newReceiver(t *testing.T) *push.Receiver {
	return &push.Receiver{DataDir: t.TempDir(), Store: storetest.New(t)}
}

func TestAPackArrivesInChunksAndIsStoredOnce(t *testing.T) {
	ctx := context.Background()
	r := newReceiver(t)
	data, digest := packOf(t, "run-a", "run-b")
	size := int64(len(data))
	third := size / 3
	for _, chunk := range [][2]int64{{0, third}, {third, 2 * third}} {
		st, err := r.Receive(ctx, digest, size, chunk[0], bytes.NewReader(data[chunk[0]:chunk[1]]))
		if err != nil || st.Stored || st.Have != chunk[1] {
			t.Fatalf("chunk %v: %+v %v", chunk, st, err)
		}
		if now, _ := r.Status(ctx, digest); now.Have != chunk[1] {
			t.Fatalf("status after chunk %v: %+v", chunk, now)
		}
	}
	// A chunk that does not start where the host's bytes end is refused,
	// naming where to go on from.
	var off *push.OffsetError
	if _, err := r.Receive(ctx, digest, size, 0, bytes.NewReader(data)); !errors.As(err, &off) || off.Have != 2*third {
		t.Fatalf("a chunk from 0 again: %v", err)
	}
	st, err := r.Receive(ctx, digest, size, 2*third, bytes.NewReader(data[2*third:]))
	if err != nil || !st.Stored || st.Runs != 2 || len(st.Problems) != 0 || st.Have != size {
		t.Fatalf("last chunk: %+v %v", st, err)
	}
	for _, id := range []string{"run-a", "run-b"} {
		if _, err := r.Store.GetRun(ctx, id); err != nil {
			t.Fatalf("run %s is not indexed: %v", id, err)
		}
	}
	// Pushed again: nothing is written, the answer is the same.
	again, err := r.Receive(ctx, digest, size, 0, bytes.NewReader(data))
	if err != nil || !again.Stored || again.Runs != 2 {
		t.Fatalf("pushed again: %+v %v", again, err)
	}
	packs, _ := filepath.Glob(filepath.Join(r.DataDir, "runs", "*"))
	parts, _ := filepath.Glob(filepath.Join(r.DataDir, "incoming", "*.part"))
	if len(packs) != 1 || filepath.Base(packs[0]) != "push-"+digest+".tar" || len(parts) != 0 {
		t.Fatalf("stored %v, parts left %v", packs, parts)
	}
}

func TestAPushIsCheckedAsHostileInput(t *testing.T) {
	ctx := context.Background()
	r := newReceiver(t)
	good, goodDigest := packOf(t, "run-a")
	if st, err := r.Receive(ctx, goodDigest, int64(len(good)), 0, bytes.NewReader(good)); err != nil || !st.Stored {
		t.Fatalf("first pack: %+v %v", st, err)
	}

	// Not a tar; a tar of no run; a tar whose entries leave the run folder
	// or link out of it.
	var hostile bytes.Buffer
	tw := tar.NewWriter(&hostile)
	add := func(hdr *tar.Header, body string) {
		hdr.Size = int64(len(body))
		if hdr.Typeflag == 0 {
			hdr.Typeflag = tar.TypeReg
		}
		if hdr.Mode == 0 {
			hdr.Mode = 0o644
		}
		tw.WriteHeader(hdr)
		tw.Write([]byte(body))
	}
	add(&tar.Header{Name: "../../etc/cron.d/x"}, "* * * * * root sh\n")
	add(&tar.Header{Name: "run-evil/workspace/link", Typeflag: tar.TypeSymlink, Linkname: "../../../../etc/passwd"}, "")
	receipt, _ := os.ReadFile(filepath.Join(writeRun(t, t.TempDir(), "run-evil"), bundle.ReceiptFile))
	add(&tar.Header{Name: "run-evil/run.json"}, string(receipt))
	// The first pack's run again: it must not replace it.
	receiptA, _ := os.ReadFile(filepath.Join(writeRun(t, t.TempDir(), "run-a"), bundle.ReceiptFile))
	add(&tar.Header{Name: "run-a/run.json"}, strings.Replace(string(receiptA), `"task": "t"`, `"task": "overwritten"`, 1))
	tw.Close()

	var empty bytes.Buffer
	tar.NewWriter(&empty).Close()
	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"not a tar", []byte("hello, host"), push.ErrNotAPack},
		{"no run", empty.Bytes(), push.ErrNotAPack},
	} {
		if _, err := r.Receive(ctx, digestOf(tc.data), int64(len(tc.data)), 0, bytes.NewReader(tc.data)); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}

	st, err := r.Receive(ctx, digestOf(hostile.Bytes()), int64(hostile.Len()), 0, bytes.NewReader(hostile.Bytes()))
	if err != nil || !st.Stored {
		t.Fatalf("hostile pack: %+v %v", st, err)
	}
	said := fmt.Sprint(st.Problems)
	for _, want := range []string{"../../etc/cron.d/x", "not a path inside a run folder", "outside the run folder", `"run-a" is already indexed`} {
		if !strings.Contains(said, want) {
			t.Errorf("the refusals do not say %q: %s", want, said)
		}
	}
	got, err := r.Store.GetRun(ctx, "run-a")
	if err != nil || got.Task != "t" || !strings.Contains(got.BundlePath, goodDigest) {
		t.Fatalf("the first pack's run was replaced: %+v %v", got, err)
	}
	// Nothing was written outside the data folder's pushed packs.
	err = filepath.WalkDir(r.DataDir, func(p string, d os.DirEntry, err error) error {
		if d != nil && d.Type()&os.ModeSymlink != 0 {
			t.Errorf("a link was made: %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	// Bad requests.
	var off *push.OffsetError
	for _, tc := range []struct {
		name         string
		digest       string
		size, offset int64
		body         []byte
		check        func(error) bool
	}{
		{"digest a path", "../../x", 10, 0, nil, func(err error) bool { return errors.Is(err, push.ErrDigest) }},
		{"digest upper case", strings.ToUpper(goodDigest), 10, 0, nil, func(err error) bool { return errors.Is(err, push.ErrDigest) }},
		{"no size", digestOf([]byte("x")), 0, 0, nil, func(err error) bool { return errors.Is(err, push.ErrSize) }},
		{"too large", digestOf([]byte("x")), 1 << 62, 0, nil, func(err error) bool { return errors.Is(err, push.ErrTooLarge) }},
		{"offset past what it has", digestOf([]byte("x")), 10, 5, []byte("abcde"), func(err error) bool { return errors.As(err, &off) && off.Have == 0 }},
		{"more bytes than the size", digestOf([]byte("abc")), 3, 0, []byte("abcdef"), func(err error) bool { return errors.Is(err, push.ErrMismatch) }},
		{"bytes of another digest", digestOf([]byte("abc")), 3, 0, []byte("xyz"), func(err error) bool { return errors.Is(err, push.ErrMismatch) }},
	} {
		if _, err := r.Receive(ctx, tc.digest, tc.size, tc.offset, bytes.NewReader(tc.body)); !tc.check(err) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if parts, _ := filepath.Glob(filepath.Join(r.DataDir, "incoming", "*.part")); len(parts) != 0 {
		t.Fatalf("refused uploads left parts: %v", parts)
	}
}

// A host that answers but keeps nothing does not keep the pusher sending
// for ever; a host that refuses the pack says why.
func TestThePusherStopsWhenTheHostTakesNothing(t *testing.T) {
	data, _ := packOf(t, "run-a")
	pack := filepath.Join(t.TempDir(), "p.tar")
	os.WriteFile(pack, data, 0o644)
	var puts int
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			puts++
			io.Copy(io.Discard, r.Body)
		}
		w.Write([]byte(`{"digest": "x", "have": 0}`))
	}))
	defer stuck.Close()
	res, err := (&push.Pusher{URL: stuck.URL, Backoff: time.Millisecond}).Push(context.Background(), pack)
	if err != nil || res[0].Err == nil || !strings.Contains(res[0].Err.Error(), "kept none of the bytes") || puts != 1 {
		t.Fatalf("%+v %v after %d PUTs", res, err, puts)
	}
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			w.WriteHeader(http.StatusUnprocessableEntity)
			w.Write([]byte(`{"error": "not a pack of runs: it holds no whole run"}`))
			return
		}
		w.Write([]byte(`{"have": 0}`))
	}))
	defer refusing.Close()
	res, _ = (&push.Pusher{URL: refusing.URL, Backoff: time.Millisecond}).Push(context.Background(), pack)
	if res[0].Err == nil || !strings.Contains(res[0].Err.Error(), "the host answered 422: not a pack of runs") {
		t.Fatalf("refused: %+v", res)
	}
}

// A push has bounds: a pack declared past the host's bound, or one that
// would take the unfinished pushes past theirs, is refused naming the
// bound before a byte is kept; unfinished pushes left alone past the
// abandon time are removed (and stray lock files with them), a live one is
// not; and a push leaves no file a digest behind once it is done or
// refused.
func TestAPushHasBounds(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	r := &push.Receiver{DataDir: t.TempDir(), Store: storetest.New(t), MaxBytes: 1000, MaxIncoming: 2200, Abandon: time.Hour, Now: func() time.Time { return now }}
	incoming := filepath.Join(r.DataDir, "incoming")
	if _, err := r.Receive(ctx, digestOf([]byte("x")), 8<<30, 0, bytes.NewReader(nil)); !errors.Is(err, push.ErrTooLarge) || !strings.Contains(err.Error(), "--max-push-bytes") {
		t.Fatalf("8 GiB declared: %v", err)
	}
	// Two unfinished pushes of 1000 bytes hold 700 each: a third, which
	// may need its 1000, is refused, naming --max-push-incoming.
	for i, d := range []string{"a", "b"} {
		st, err := r.Receive(ctx, digestOf([]byte(d)), 1000, 0, bytes.NewReader(bytes.Repeat([]byte{'x'}, 700)))
		if err != nil || st.Have != 700 {
			t.Fatalf("unfinished push %d: %+v %v", i, st, err)
		}
	}
	if _, err := r.Receive(ctx, digestOf([]byte("c")), 1000, 0, bytes.NewReader(bytes.Repeat([]byte{'x'}, 700))); !errors.Is(err, push.ErrTooLarge) || !strings.Contains(err.Error(), "--max-push-incoming") {
		t.Fatalf("past the incoming bound: %v", err)
	}
	if _, err := os.Stat(filepath.Join(incoming, digestOf([]byte("c"))+".part")); err == nil {
		t.Fatal("the refused push left a part")
	}
	// An hour later, the two are abandoned and removed (and a lock file an
	// older host left); then the third is taken.
	os.WriteFile(filepath.Join(incoming, digestOf([]byte("z"))+".lock"), nil, 0o644)
	old := now.Add(-2 * time.Hour)
	for _, d := range []string{"a", "b"} {
		os.Chtimes(filepath.Join(incoming, digestOf([]byte(d))+".part"), old, old)
	}
	if n := r.Sweep(); n != 3 {
		t.Fatalf("the sweep removed %d, want the 2 abandoned parts and the lock file", n)
	}
	if st, err := r.Receive(ctx, digestOf([]byte("c")), 1000, 0, bytes.NewReader(bytes.Repeat([]byte{'x'}, 700))); err != nil || st.Have != 700 {
		t.Fatalf("after the sweep: %+v %v", st, err)
	}
	// A whole push leaves only its pack.
	data, digest := packOf(t, "run-a")
	r.MaxBytes, r.MaxIncoming = 1<<20, 2<<20
	if st, err := r.Receive(ctx, digest, int64(len(data)), 0, bytes.NewReader(data)); err != nil || !st.Stored {
		t.Fatalf("a whole push: %+v %v", st, err)
	}
	left, _ := os.ReadDir(incoming)
	if len(left) != 1 || left[0].Name() != digestOf([]byte("c"))+".part" {
		t.Fatalf("incoming holds %v, want only the unfinished push", left)
	}
}

// A pack that holds the same run twice, back to back, is not merged into
// one: the first copy is indexed, the second is a problem the push lists.
func TestARunTwiceInAPackIsAProblem(t *testing.T) {
	ctx := context.Background()
	r := newReceiver(t)
	dir := t.TempDir()
	first, second := writeRun(t, filepath.Join(dir, "1"), "run-twice"), writeRun(t, filepath.Join(dir, "2"), "run-twice")
	os.WriteFile(filepath.Join(second, bundle.DiffFile), []byte("not the first copy's\n"), 0o644)
	w, err := bundle.CreatePack(filepath.Join(dir, "p.tar"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(first, "run-twice"); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(second, "run-twice"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	data, _ := os.ReadFile(w.Path())
	st, err := r.Receive(ctx, digestOf(data), int64(len(data)), 0, bytes.NewReader(data))
	if err != nil || !st.Stored || st.Runs != 1 || !strings.Contains(fmt.Sprint(st.Problems), "appears twice in the pack") {
		t.Fatalf("%+v %v", st, err)
	}
}

// sessionJSON is a session file's bytes: session id, updated at minute,
// with runs.
func sessionJSON(id string, minute int, runs ...string) string {
	created := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	s := map[string]any{"schema": bundle.SessionSchema, "session_id": id, "title": "t", "workspace": "/home/victim/.ssh",
		"source": "/etc", "created_at": created, "updated_at": created.Add(time.Duration(minute) * time.Minute), "runs": runs,
		"bounds": map[string]any{}}
	b, _ := json.Marshal(s)
	return string(b)
}

// tarOf is a tar of the entries, name → body, in order; a body "->x" is a
// link to x.
func tarOf(entries ...[2]string) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		hdr := &tar.Header{Name: e[0], Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(e[1]))}
		if link, ok := strings.CutPrefix(e[1], "->"); ok {
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeSymlink, link, 0
		}
		tw.WriteHeader(hdr)
		if hdr.Size > 0 {
			tw.Write([]byte(e[1]))
		}
	}
	tw.Close()
	return b.Bytes()
}

// The sessions a push carries are kept, each the newest copy pushed, read
// as hostile input: a session file that is not one (a wrong id, a name
// out of the folder, a link, bad JSON) is refused and named, and only
// what the host read of a session reaches its file.
func TestPushedSessionsKeepTheNewestCopy(t *testing.T) {
	ctx := context.Background()
	r := newReceiver(t)
	receive := func(data []byte) push.Status {
		t.Helper()
		st, err := r.Receive(ctx, digestOf(data), int64(len(data)), 0, bytes.NewReader(data))
		if err != nil || !st.Stored {
			t.Fatalf("push: %+v %v", st, err)
		}
		return st
	}
	runs := func() int {
		t.Helper()
		s, err := r.Store.GetSession(ctx, "sess-1")
		if err != nil {
			t.Fatal(err)
		}
		if !bundle.PushedSession(s.BundlePath) {
			t.Fatalf("indexed from %s, not the pushed sessions", s.BundlePath)
		}
		return s.RunCount
	}
	receipt, _ := os.ReadFile(filepath.Join(writeRun(t, t.TempDir(), "run-a"), bundle.ReceiptFile))
	if st := receive(tarOf([2]string{"run-a/run.json", string(receipt)}, [2]string{".sessions/sess-1.json", sessionJSON("sess-1", 1, "run-a")})); st.Runs != 1 || st.Sessions != 1 || len(st.Problems) != 0 {
		t.Fatalf("a run and its session: %+v", st)
	}
	if n := runs(); n != 1 {
		t.Fatalf("%d runs", n)
	}
	// A later copy (a later push of the same data folder) replaces it; an
	// earlier one pushed after it does not.
	if st := receive(tarOf([2]string{".sessions/sess-1.json", sessionJSON("sess-1", 5, "run-a", "run-b")})); st.Runs != 0 || st.Sessions != 1 {
		t.Fatalf("a pack of sessions alone: %+v", st)
	}
	if n := runs(); n != 2 {
		t.Fatalf("after the newer copy: %d runs", n)
	}
	receive(tarOf([2]string{".sessions/sess-1.json", sessionJSON("sess-1", 3, "run-a")}))
	if n := runs(); n != 2 {
		t.Fatalf("an older copy pushed later replaced the newer: %d runs", n)
	}

	// Hostile session files.
	st := receive(tarOf(
		[2]string{"run-b/run.json", strings.ReplaceAll(string(receipt), "run-a", "run-b")},
		[2]string{".sessions/sess-2.json", sessionJSON("sess-other", 1)},
		[2]string{".sessions/../../sessions/sess-3.json", sessionJSON("sess-3", 1)},
		[2]string{".sessions/sess-4.json", "->../../../etc/passwd"},
		[2]string{".sessions/sess-5.json", `{"schema": "proctor.session.v1", "session_id": "sess-5", "created_at": "x"}`},
		[2]string{".sessions/sess-6.json", sessionJSON("sess-6", 1, "../../etc")},
	))
	said := fmt.Sprint(st.Problems)
	for _, want := range []string{"sess-2.json", "does not match its file name", "../../sessions/sess-3.json", "sess-4.json: not a session file", "sess-5.json", "sess-6.json", "not a safe run id"} {
		if !strings.Contains(said, want) {
			t.Errorf("the refusals do not say %q: %s", want, said)
		}
	}
	if st.Sessions != 0 {
		t.Errorf("%d hostile sessions taken", st.Sessions)
	}
	kept, _ := os.ReadDir(filepath.Join(r.DataDir, "sessions", bundle.PushedSessions))
	var names []string
	for _, e := range kept {
		names = append(names, e.Name())
	}
	if fmt.Sprint(names) != "[.lock sess-1.json]" {
		t.Fatalf("kept %v", names)
	}
	if _, err := os.Stat(filepath.Join(r.DataDir, "sessions", "sess-3.json")); err == nil {
		t.Fatal("a session file's name left the pushed sessions")
	}
	// A pack whose only entries are refused session files is not a pack.
	bad := tarOf([2]string{".sessions/sess-7.json", "{"})
	if _, err := r.Receive(ctx, digestOf(bad), int64(len(bad)), 0, bytes.NewReader(bad)); !errors.Is(err, push.ErrNotAPack) || !strings.Contains(err.Error(), "sess-7.json") {
		t.Fatalf("a pack of one bad session: %v", err)
	}
}
