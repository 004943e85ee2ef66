package launch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/derive"
	"github.com/proctor-dev/proctor/internal/redact"
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
	getenv := l.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var keys []string
	for _, n := range l.Runner.KeyEnvNames {
		if v := getenv(n); v != "" {
			keys = append(keys, v)
		}
	}
	made, err := derive.FromRun(ctx, derive.Run{Dir: dir, Workspace: recs.BaseRepo(runID, &b.Receipt)}, filepath.Join(l.ScenarioRoots[0], name), derive.Options{Redact: redact.FromEnv(l.Runner.Environ, keys...)})
	if err != nil {
		return nil, fieldErrors(&FieldError{"name", err.Error()})
	}
	return made, nil
}
