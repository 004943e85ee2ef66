package push

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// Pusher sends packs of runs to a host's /api/v1/push.
type Pusher struct {
	URL     string // the host's address, e.g. https://proctor.lan:7070
	Token   string // an API token that may push ("Bearer ptk_…")
	Client  *http.Client
	Chunk   int64         // bytes a request sends at most; 0 is 32 MiB
	Retries int           // tries of a request that failed for want of a connection or a 5xx; 0 is 6
	Backoff time.Duration // the first wait between tries, doubled each time up to 10 s; 0 is 0.5 s
}

// Result is what became of one path pushed.
type Result struct {
	Path    string
	Digest  string
	Already bool // the host had it whole before
	Status  Status
	Err     error
}

// Pushed reports whether the host has the path's runs stored.
func (r Result) Pushed() bool { return r.Err == nil && r.Status.Stored }

// Push sends every path: a pack (*.tar), a run folder (packed for the
// push), or a data folder (every pack and run folder under its runs/).
// Each is sent once: a pack the host has whole is not sent again, one it
// has part of goes on from there. A path that is none of these is an
// error before anything is sent.
func (p *Pusher) Push(ctx context.Context, paths ...string) ([]Result, error) {
	var items []string
	for _, path := range paths {
		found, err := packsOf(path)
		if err != nil {
			return nil, err
		}
		items = append(items, found...)
	}
	var out []Result
	for _, item := range items {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		out = append(out, p.pushOne(ctx, item))
	}
	return out, nil
}

// packsOf lists what path holds to push: packs, and run folders.
func packsOf(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("push %s: %w", path, err)
	}
	if !info.IsDir() {
		if !strings.HasSuffix(path, bundle.PackSuffix) {
			return nil, fmt.Errorf("push %s: not a pack (*%s), a run folder or a data folder", path, bundle.PackSuffix)
		}
		return []string{path}, nil
	}
	if _, err := os.Stat(filepath.Join(path, bundle.ReceiptFile)); err == nil {
		return []string{path}, nil
	}
	runs := filepath.Join(path, "runs")
	entries, err := os.ReadDir(runs)
	if err != nil {
		return nil, fmt.Errorf("push %s: not a pack, a run folder (no %s) or a data folder (no runs/)", path, bundle.ReceiptFile)
	}
	var out []string
	for _, e := range entries {
		p := filepath.Join(runs, e.Name())
		switch {
		case strings.HasPrefix(e.Name(), "."): // the unpack cache, temp files
		case e.Type().IsRegular() && strings.HasSuffix(e.Name(), bundle.PackSuffix):
			out = append(out, p)
		case e.IsDir():
			if _, err := os.Stat(filepath.Join(p, bundle.ReceiptFile)); err == nil {
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	// The data folder's sessions go too, in a pack of their own: the host
	// keeps the newest copy of each.
	if files, _ := sessionFiles(filepath.Join(path, "sessions")); len(files) > 0 {
		out = append(out, filepath.Join(path, "sessions"))
	}
	return out, nil
}

// sessionFiles lists a data folder's session files (sessions/<id>.json; not
// the sessions pushed to it from elsewhere, in sessions/pushed/).
func sessionFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && e.Type().IsRegular() && bundle.ValidID(id) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

// isSessions reports whether path is a data folder's sessions/ (not a run
// folder that happens to have the name).
func isSessions(path string) bool {
	if filepath.Base(path) != "sessions" {
		return false
	}
	_, err := os.Stat(filepath.Join(path, bundle.ReceiptFile))
	return err != nil
}

// pushOne sends one pack or run folder.
func (p *Pusher) pushOne(ctx context.Context, path string) Result {
	res := Result{Path: path}
	pack, cleanup, err := asPack(path)
	if err != nil {
		res.Err = err
		return res
	}
	defer cleanup()
	if res.Digest, err = fileDigest(pack); err != nil {
		res.Err = fmt.Errorf("push %s: %w", path, err)
		return res
	}
	info, err := os.Stat(pack)
	if err != nil {
		res.Err = fmt.Errorf("push %s: %w", path, err)
		return res
	}
	size := info.Size()
	st, err := p.status(ctx, res.Digest)
	if err != nil {
		res.Err = fmt.Errorf("push %s: %w", path, err)
		return res
	}
	res.Already = st.Stored
	for !st.Stored {
		before := st.Have
		if st, err = p.send(ctx, pack, res.Digest, size, st.Have); err != nil {
			res.Err = fmt.Errorf("push %s: %w", path, err)
			return res
		}
		if !st.Stored && st.Have <= before { // a host that takes nothing would keep it sending forever
			res.Err = fmt.Errorf("push %s: the host kept none of the bytes sent (it has %d of %d)", path, st.Have, size)
			return res
		}
	}
	res.Status = st
	return res
}

// asPack is the pack file to send for path: the pack itself, or a run
// folder or a data folder's sessions/ packed in a temporary file (removed
// by cleanup). A folder packed twice is the same bytes, so it is sent
// once.
func asPack(path string) (pack string, cleanup func(), err error) {
	if strings.HasSuffix(path, bundle.PackSuffix) {
		return path, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "proctor-push-*")
	if err != nil {
		return "", nil, fmt.Errorf("push %s: %w", path, err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	id := filepath.Base(path)
	w, err := bundle.CreatePack(filepath.Join(dir, id+bundle.PackSuffix))
	if err == nil {
		err = addTo(w, path, id)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("push %s: %w", path, err)
	}
	return w.Path(), cleanup, nil
}

// addTo adds the run folder at path (named id), or every session file of
// a data folder's sessions/, to w.
func addTo(w *bundle.PackWriter, path, id string) error {
	if !isSessions(path) {
		return w.Add(path, id)
	}
	files, err := sessionFiles(path)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := w.AddSession(f); err != nil {
			return err
		}
	}
	return nil
}

// apiError is an answer other than 2xx: its status and the host's words.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return fmt.Sprintf("the host answered %d: %s", e.status, e.msg) }

// retryable reports whether a failed request may succeed if tried again.
func retryable(err error) bool {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.status >= 500 || ae.status == http.StatusTooManyRequests || ae.status == http.StatusConflict
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// try runs do until it succeeds, fails for good, or has failed Retries
// times, waiting longer after each failure.
func (p *Pusher) try(ctx context.Context, do func() (Status, error)) (Status, error) {
	tries, wait := p.Retries, p.Backoff
	if tries <= 0 {
		tries = 6
	}
	if wait <= 0 {
		wait = 500 * time.Millisecond
	}
	for i := 1; ; i++ {
		st, err := do()
		if err == nil || !retryable(err) || i == tries {
			return st, err
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 10*time.Second)
	}
}

func (p *Pusher) endpoint(digest string) string {
	return strings.TrimRight(p.URL, "/") + "/api/v1/push/" + digest
}

func (p *Pusher) client() *http.Client {
	if p.Client != nil {
		return p.Client
	}
	return http.DefaultClient
}

// status asks the host what it has of the pack.
func (p *Pusher) status(ctx context.Context, digest string) (Status, error) {
	return p.try(ctx, func() (Status, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.endpoint(digest), nil)
		if err != nil {
			return Status{}, err
		}
		return p.do(req)
	})
}

// send sends the pack's bytes from offset on, gzipped, up to a chunk; on
// an answer that the host has other bytes than offset, it asks the host
// and goes on from what it has.
func (p *Pusher) send(ctx context.Context, pack, digest string, size, offset int64) (Status, error) {
	chunk := p.Chunk
	if chunk <= 0 {
		chunk = 32 << 20
	}
	return p.try(ctx, func() (Status, error) {
		f, err := os.Open(pack)
		if err != nil {
			return Status{}, err
		}
		defer f.Close()
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return Status{}, err
		}
		body, w := io.Pipe()
		go func() {
			zw := gzip.NewWriter(w)
			_, err := io.Copy(zw, io.LimitReader(f, chunk))
			if err == nil {
				err = zw.Close()
			}
			w.CloseWithError(err)
		}()
		q := url.Values{"size": {strconv.FormatInt(size, 10)}, "offset": {strconv.FormatInt(offset, 10)}}
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, p.endpoint(digest)+"?"+q.Encode(), body)
		if err != nil {
			body.Close()
			return Status{}, err
		}
		req.Header.Set("Content-Encoding", "gzip")
		req.Header.Set("Content-Type", "application/x-tar")
		st, err := p.do(req)
		body.Close()
		var ae *apiError
		if errors.As(err, &ae) && ae.status == http.StatusConflict || err != nil && retryable(err) {
			// The host may have more (or less) than was sent: ask it.
			if now, serr := p.status(ctx, digest); serr == nil {
				offset = now.Have
				if now.Stored {
					return now, nil
				}
			}
		}
		return st, err
	})
}

// do sends a request with the token and reads the host's Status.
func (p *Pusher) do(req *http.Request) (Status, error) {
	if p.Token != "" {
		req.Header.Set("Authorization", "Bearer "+p.Token)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.client().Do(req)
	if err != nil {
		return Status{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return Status{}, err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(body[:min(len(body), 300)]))
		}
		return Status{}, &apiError{status: resp.StatusCode, msg: e.Error}
	}
	var st Status
	if err := json.Unmarshal(body, &st); err != nil {
		return Status{}, fmt.Errorf("the host's answer is not a push status: %w", err)
	}
	return st, nil
}
