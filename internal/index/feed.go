package index

import (
	"context"
	"fmt"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/store"
)

// pendingFingerprint marks runs fed from a pack that is still being
// written; Close replaces it with the finished pack's fingerprint.
const pendingFingerprint = "pending"

// Feed indexes the runs of a pack while the pack is being written: each
// run is read from its files in memory as it is packed, and
// written to the store a batch at a time in the background, so indexing
// overlaps the work of making the runs instead of following it. Close seals
// the index of the pack: its runs take the finished pack's fingerprint, so a
// later pass does not read the pack again.
type Feed struct {
	ix   *Indexer
	pack string
	ch   chan store.BundleUpdate
	done chan struct{}
	rep  Report
	err  error
}

// Feed starts indexing the runs of the pack at path (made by
// bundle.CreatePack) as they are added with AddFiles.
func (ix *Indexer) Feed(ctx context.Context, pack string) *Feed {
	f := &Feed{ix: ix, pack: pack, ch: make(chan store.BundleUpdate, ix.batchSize), done: make(chan struct{})}
	go f.loop(ctx)
	return f
}

func (f *Feed) loop(ctx context.Context) {
	defer close(f.done)
	owners := map[string]string{}
	batch := make([]store.BundleUpdate, 0, f.ix.batchSize)
	flush := func() {
		if len(batch) > 0 && f.err == nil {
			f.err = f.ix.apply(ctx, batch, nil, owners, nil, &f.rep)
		}
		batch = batch[:0]
	}
	for u := range f.ch {
		if batch = append(batch, u); len(batch) == f.ix.batchSize {
			flush()
		}
	}
	flush()
}

// AddFiles queues a run the pack holds (or is about to hold) as run id,
// from its own files in memory, to be indexed under its reference
// PACK#id. It is safe for concurrent use.
func (f *Feed) AddFiles(id string, files []bundle.File) {
	ref := bundle.PackRef(f.pack, id)
	run, err := bundle.ReadRunFiles(ref, id, files, f.ix.limits)
	f.queue(ref, run, err)
}

func (f *Feed) queue(ref string, run *bundle.Run, err error) {
	u := store.BundleUpdate{Path: ref, Kind: store.BundleRun, Fingerprint: pendingFingerprint}
	if err != nil {
		u.Problems = asProblems(err, ref+"/"+bundle.ReceiptFile)
	} else {
		u.Run, u.Problems = run, run.Problems
	}
	f.ch <- u
}

// Close writes what is queued and seals the pack's index. Call it after
// the pack itself is closed.
func (f *Feed) Close(ctx context.Context) (Report, error) {
	close(f.ch)
	<-f.done
	if f.err != nil {
		return f.rep, fmt.Errorf("index %s: %w", f.pack, f.err)
	}
	fp, err := fingerprint(candidate{path: f.pack, kind: store.BundleRun, pack: true})
	if err == nil {
		err = f.ix.store.SealPack(ctx, f.pack, pendingFingerprint, fp)
	}
	if err != nil {
		return f.rep, fmt.Errorf("index %s: %w", f.pack, err)
	}
	return f.rep, nil
}
