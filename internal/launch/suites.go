package launch

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/jobs"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/scenario"
	"github.com/proctor-dev/proctor/internal/suite"
)

// underScenarioRoot reports whether dir is a folder inside one of the
// server's scenario roots (a queue file names it; it is not trusted).
func (l *Launcher) underScenarioRoot(dir string) bool {
	for _, root := range l.ScenarioRoots {
		abs, err := filepath.Abs(root)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(abs, dir); err == nil && filepath.IsLocal(rel) {
			return true
		}
	}
	return false
}

// Suite checks a suite launch and queues its runs: every chosen
// scenario k times, each a job of the launch queue (so --workers bounds
// them, each can be stopped, the server waits for them at shutdown, and one
// not started yet is launched again after a restart).
func (l *Launcher) Suite(req SuiteRequest) (string, error) {
	ids, tags, k, model := req.Scenarios, req.Tags, req.Repeat, req.Model
	errs := FieldErrors{}
	if k < 1 || k > 100 {
		errs.add(&FieldError{"repeat", "want a whole number from 1 to 100"})
	}
	chosen := map[string]bool{}
	for _, id := range ids {
		chosen[id] = true
	}
	found, _ := scenario.Discover(l.ScenarioRoots...)
	var picked []*scenario.Scenario
	for _, sc := range found {
		tagged := false
		for _, t := range tags {
			tagged = tagged || sc.HasTag(t)
		}
		if chosen[sc.ID] || tagged {
			picked = append(picked, sc)
		}
	}
	if len(picked) == 0 {
		errs.add(&FieldError{"scenarios", "choose at least one scenario (or a tag that one has)"})
	}
	if model != "" {
		_, ferr := l.Profile(model)
		errs.add(ferr)
	}
	if req.Agent != "" {
		_, ferr := l.Agent(req.Agent)
		errs.add(ferr)
	}
	if len(errs) > 0 {
		return "", errs
	}
	id := suite.NewID(time.Now())
	// Every run's spec is made before any is queued: a suite that cannot
	// run whole is not launched.
	var recs []queuedRecord
	var specs []run.Spec
	for _, sc := range picked {
		for i := 1; i <= k; i++ {
			rec := queuedRecord{RunID: run.NewRunID(time.Now()), Kind: "scenario", Scenario: &queuedScenario{Dir: sc.Dir, Repeat: i, Suite: id, Model: model, Agent: req.Agent}}
			spec, err := l.scenarioSpec(sc, rec)
			if err != nil {
				return "", fieldErrors(&FieldError{"scenarios", fmt.Sprintf("%s cannot run: %v", sc.ID, err)})
			}
			recs, specs = append(recs, rec), append(specs, spec)
		}
	}
	l.launched(id)
	for i, rec := range recs {
		l.submitScenario(specs[i], rec)
	}
	return id, nil
}

// SuiteRequest is a suite launch: the scenarios chosen by id and by tag,
// K repeats of each, and a model profile and an agent that replace each
// scenario's own when given.
type SuiteRequest struct {
	Scenarios, Tags []string
	Repeat          int
	Model, Agent    string
}

// scenarioSpec is the spec of the queued run rec of scenario sc.
func (l *Launcher) scenarioSpec(sc *scenario.Scenario, rec queuedRecord) (run.Spec, error) {
	q := rec.Scenario
	opt := run.ScenarioOptions{Repeat: q.Repeat, Suite: q.Suite, Profile: func(name string) (run.ModelChoice, error) {
		m, ferr := l.Profile(name)
		if ferr != nil {
			return m, errors.New(ferr.Problem)
		}
		return m, nil
	}}
	if q.Model != "" {
		m, err := opt.Profile(q.Model)
		if err != nil {
			return run.Spec{}, err
		}
		opt.Model = &m
	}
	if q.Agent != "" {
		a, ferr := l.Agent(q.Agent)
		if ferr != nil {
			return run.Spec{}, errors.New(ferr.Problem)
		}
		opt.Agent = &a
	}
	spec, err := l.Runner.ScenarioSpec(sc, opt)
	spec.RunID, spec.Followed = rec.RunID, true
	return spec, err
}

// resumeScenario queues again a run of a suite from its queue record, whose
// scenario folder must be under a scenario root (the file is not trusted).
func (l *Launcher) resumeScenario(rec queuedRecord) error {
	if rec.Scenario == nil || !bundle.ValidID(rec.Scenario.Suite) || !l.underScenarioRoot(rec.Scenario.Dir) {
		return errors.New("not a scenario of this server's scenario roots")
	}
	l.launched(rec.Scenario.Suite)
	sc, err := scenario.Load(rec.Scenario.Dir)
	if err != nil {
		return err
	}
	spec, err := l.scenarioSpec(sc, rec)
	if err != nil {
		return err
	}
	l.submitScenario(spec, rec)
	return nil
}

// submitScenario queues one run of a suite, remembered on disk until it
// starts.
func (l *Launcher) submitScenario(spec run.Spec, rec queuedRecord) {
	spec.Started = l.remember(rec)
	spec.Dropped = spec.Started
	l.Queue.Submit(spec, fmt.Sprintf("%s #%d (suite %s)", spec.Scenario.ID, rec.Scenario.Repeat, rec.Scenario.Suite))
}

// SuiteQueued are the runs of suite id that wait in the launch queue, in
// its order: their scenarios are not in the suite's matrix until they
// start.
func (l *Launcher) SuiteQueued(id string) []jobs.Job {
	if l.Queue == nil {
		return nil
	}
	var out []jobs.Job
	for _, j := range l.Queue.Queued() {
		if j.Suite == id {
			out = append(out, j)
		}
	}
	return out
}
