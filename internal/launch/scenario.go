package launch

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/derive"
)

// MakeScenario makes a regression scenario of run runID, named name, in
// the first folder suites are launched from (derive.FromRun): the Suites
// page lists it at once. The secrets of proctor's environment and every
// profile's key are in no file of it.
func (l *Launcher) MakeScenario(ctx context.Context, runID, name string) (*derive.Made, error) {
	if len(l.ScenarioRoots) == 0 {
		return nil, fieldErrors(&FieldError{"name", "this dashboard has no scenario folder to write into: start proctor serve with --scenarios DIR"})
	}
	if !bundle.ValidID(name) {
		return nil, fieldErrors(&FieldError{"name", fmt.Sprintf("scenario name %q: use letters, digits, '.', '_' and '-' (it names the folder and the scenario)", name)})
	}
	recs := l.Runner.Records()
	b, dir, err := recs.Read(runID)
	if err != nil {
		return nil, err
	}
	made, err := derive.FromRun(ctx, derive.Run{Dir: dir, Workspace: recs.BaseRepo(runID, &b.Receipt)}, filepath.Join(l.ScenarioRoots[0], name), derive.Options{Redact: l.Runner.Redactor(l.getenv())})
	if err != nil {
		return nil, fieldErrors(&FieldError{"name", err.Error()})
	}
	return made, nil
}

// ContinueAsSession makes a scenario run that has ended the first run of a
// session (records.Data.ContinueAsSession) and indexes the session, so
// that its page — where Continue goes on from the run — is there at once.
func (l *Launcher) ContinueAsSession(ctx context.Context, runID string) (string, error) {
	recs := l.Runner.Records()
	sid, err := recs.ContinueAsSession(runID)
	if err != nil {
		return "", err
	}
	if l.Runner.Index != nil {
		if err := l.Runner.Index(ctx, filepath.Join(recs.SessionsDir(), sid+".json")); err != nil {
			return "", fmt.Errorf("index session %s: %w", sid, err)
		}
	}
	return sid, nil
}
