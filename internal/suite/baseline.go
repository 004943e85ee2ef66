package suite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/flock"
	"github.com/proctor-dev/proctor/internal/osfile"
)

// Baseline names the suite a scenario set's later suites are compared
// with (a team's "main", say).
type Baseline struct {
	Name  string    `json:"name"`
	Suite string    `json:"suite"`
	SetBy string    `json:"set_by"`
	SetAt time.Time `json:"set_at"`
}

// baselinesFile is where a data folder keeps its baselines, the record of
// them (the index does not hold them).
func baselinesFile(dataDir string) string { return filepath.Join(dataDir, "baselines.json") }

// maxBaselines bounds the file.
const maxBaselines = 1000

// Baselines are the data folder's baselines, by name.
func Baselines(dataDir string) ([]Baseline, error) {
	path := baselinesFile(dataDir)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read baselines: %w", err)
	}
	var out []Baseline
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("read baselines %s: %w (fix the file, or remove it and set the baselines again)", path, err)
	}
	for _, b := range out {
		if !bundle.ValidID(b.Name) || !bundle.ValidID(b.Suite) {
			return nil, fmt.Errorf("read baselines %s: baseline %q of suite %q: a name and a suite are letters, digits, '.', '_' and '-'", path, b.Name, b.Suite)
		}
	}
	return out, nil
}

// FindBaseline is the baseline called name (ok false: none).
func FindBaseline(dataDir, name string) (Baseline, bool, error) {
	all, err := Baselines(dataDir)
	for _, b := range all {
		if b.Name == name {
			return b, true, err
		}
	}
	return Baseline{}, false, err
}

// SetBaseline makes suite the baseline called name (replacing the suite it
// named), written atomically under a lock so that two setters lose
// nothing.
func SetBaseline(ctx context.Context, dataDir, name, suite, by string) error {
	return updateBaselines(ctx, dataDir, func(all []Baseline) ([]Baseline, error) {
		if !bundle.ValidID(name) {
			return nil, fmt.Errorf("baseline name %q: use letters, digits, '.', '_' and '-' (at most 128)", name)
		}
		if !bundle.ValidID(suite) {
			return nil, fmt.Errorf("suite %q: not a suite id", suite)
		}
		b := Baseline{Name: name, Suite: suite, SetBy: by, SetAt: time.Now().UTC()}
		for i := range all {
			if all[i].Name == name {
				all[i] = b
				return all, nil
			}
		}
		if len(all) >= maxBaselines {
			return nil, fmt.Errorf("baseline %s: there are %d baselines already; remove one first", name, len(all))
		}
		return append(all, b), nil
	})
}

// RemoveBaseline removes the baseline called name (ok false: there was
// none).
func RemoveBaseline(ctx context.Context, dataDir, name string) (ok bool, err error) {
	err = updateBaselines(ctx, dataDir, func(all []Baseline) ([]Baseline, error) {
		for i := range all {
			if all[i].Name == name {
				ok = true
				return append(all[:i], all[i+1:]...), nil
			}
		}
		return all, nil
	})
	return ok, err
}

func updateBaselines(ctx context.Context, dataDir string, change func([]Baseline) ([]Baseline, error)) error {
	lock, err := flock.Wait(ctx, baselinesFile(dataDir)+".lock", true)
	if err != nil {
		return fmt.Errorf("lock baselines: %w", err)
	}
	defer lock.Unlock()
	all, err := Baselines(dataDir)
	if err != nil {
		return err
	}
	if all, err = change(all); err != nil {
		return err
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	if err := osfile.WriteFile(baselinesFile(dataDir), 0o644, true, osfile.Bytes(append(data, '\n'))); err != nil {
		return fmt.Errorf("write baselines: %w", err)
	}
	return nil
}

// ResolveSuite is the suite that ref names: a baseline's suite when a
// baseline has that name (then baseline is its name), else ref as a suite
// id.
func ResolveSuite(dataDir, ref string) (id, baseline string, err error) {
	b, ok, err := FindBaseline(dataDir, ref)
	if err != nil {
		return "", "", err
	}
	if ok {
		return b.Suite, b.Name, nil
	}
	if !bundle.ValidID(ref) {
		return "", "", fmt.Errorf("%q is neither a baseline nor a suite id", ref)
	}
	return ref, "", nil
}

// LatestBaseline is the name of the baseline set last, the base a
// comparison starts from ("" when there is none).
func LatestBaseline(list []Baseline) string {
	var last Baseline
	for _, b := range list {
		if last.Name == "" || b.SetAt.After(last.SetAt) {
			last = b
		}
	}
	return last.Name
}
