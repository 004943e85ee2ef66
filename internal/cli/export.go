package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/osfile"
	"github.com/proctor-dev/proctor/internal/runview"
	"github.com/proctor-dev/proctor/internal/server"
	"github.com/proctor-dev/proctor/internal/store"
)

func runExport(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "export", "RUN_ID --html FILE [--data DIR]", `
Write a run as one self-contained HTML file: its summary, checks, transcript
and diff, with the stylesheet inline and no script, loading nothing from
anywhere — it opens offline in any browser, for a bug report or a pull
request. The dashboard's run page offers the same file to download.`)
	data := fs.String("data", "", "data `folder` (default $PROCTOR_DATA, else $XDG_DATA_HOME/proctor)")
	out := fs.String("html", "", "the HTML `file` to write")
	if err := parseFlags(fs, "export", args); err != nil {
		return err
	}
	if fs.NArg() != 1 || *out == "" {
		return usagef("export", "name one RUN_ID and --html FILE")
	}
	id := fs.Arg(0)
	if !bundle.ValidID(id) {
		return usagef("export", "%q is not a run id", id)
	}
	dir, err := dataDir(*data, env.Getenv)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dbPath(dir)); err != nil {
		return usagef("export", "data folder %s has no index: run 'proctor index' on the folder that holds the run", dir)
	}
	st, err := openIndex(ctx, env.Getenv, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	runs := &runview.Service{Store: st, DataDir: dir, Limits: bundle.DefaultLimits()}
	page, err := server.ExportRun(ctx, runs, id, time.Now())
	if errors.Is(err, store.ErrNotFound) {
		return usagef("export", "no run %s is indexed in %s; 'proctor index' its folder first", id, dir)
	}
	if err != nil {
		return err
	}
	err = osfile.WriteFile(*out, 0o644, true, func(w io.Writer) error { return page.Render(ctx, w) })
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "wrote run %s to %s\n", id, *out)
	return nil
}
