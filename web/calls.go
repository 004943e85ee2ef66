package web

import (
	"slices"
	"strconv"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// CallsPage is the view model of a run's recorded calls to its model.
type CallsPage struct {
	Meta     Meta
	RunID    string
	Calls    []bundle.Exchange
	Problems bundle.Problems // lines of exchanges.jsonl that could not be read
}

// callWhat says what a call asked: a model call, or a call beside them.
func callWhat(c bundle.Exchange) string {
	if c.Call != "" {
		return humanStatus(c.Call)
	}
	return "model call"
}

// callAPI is the API a call spoke.
func callAPI(c bundle.Exchange) string {
	if c.API == "" {
		return "chat"
	}
	return c.API
}

func requestURL(id string, seq int64) string {
	return runURL(id) + "/calls/" + strconv.FormatInt(seq, 10) + "/request"
}

func callTook(c bundle.Exchange) string {
	return formatDuration(time.Duration(c.DurationMS) * time.Millisecond)
}

// LinksCalls says whether the run page links to the run's calls: it
// recorded some, and the page is read on the dashboard.
func (p RunPage) LinksCalls() bool {
	return !p.Detached && slices.Contains(p.BundleFiles, bundle.ExchangesFile)
}
