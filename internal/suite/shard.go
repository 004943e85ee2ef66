package suite

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Shard is the K-th of N shares of a suite's cases (1 ≤ K ≤ N), for a
// suite run on N machines at once: the zero Shard is every case.
type Shard struct{ K, N int }

// ParseShard reads "K/N".
func ParseShard(s string) (Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	sh := Shard{}
	var errK, errN error
	sh.K, errK = strconv.Atoi(strings.TrimSpace(k))
	sh.N, errN = strconv.Atoi(strings.TrimSpace(n))
	if !ok || errK != nil || errN != nil || sh.N < 1 || sh.N > 10000 || sh.K < 1 || sh.K > sh.N {
		return Shard{}, fmt.Errorf("%q: want K/N, the K-th of N shards, 1 ≤ K ≤ N ≤ 10000 (e.g. 2/4)", s)
	}
	return sh, nil
}

// All reports whether the shard is every case.
func (s Shard) All() bool { return s.N <= 1 }

func (s Shard) String() string { return strconv.Itoa(s.K) + "/" + strconv.Itoa(s.N) }

// packSuffix tells the packs of a suite's shards apart.
func (s Shard) packSuffix() string {
	if s.All() {
		return ""
	}
	return fmt.Sprintf(".shard-%d-of-%d", s.K, s.N)
}

// pick keeps the shard's cases. The cases are ranked by a hash of what
// makes each one (its scenario, agent and repeat) and dealt to the N
// shards in turn: every machine that enumerates the same suite makes the
// same split, whatever order it found the scenarios in; the shards differ
// by one case at most; and the K-th shard of two runs of the suite holds
// the same cases.
func (s Shard) pick(cases []Case) []Case {
	if s.All() {
		return cases
	}
	type ranked struct {
		hash [32]byte
		key  string
		i    int
	}
	rs := make([]ranked, len(cases))
	for i, c := range cases {
		key := c.Scenario.ID + "\x00" + c.agentName() + "\x00" + strconv.Itoa(c.Repeat)
		rs[i] = ranked{sha256.Sum256([]byte(key)), key, i}
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		return cmp.Or(slices.Compare(a.hash[:], b.hash[:]), strings.Compare(a.key, b.key))
	})
	var keep []int
	for j := s.K - 1; j < len(rs); j += s.N {
		keep = append(keep, rs[j].i)
	}
	slices.Sort(keep) // the suite's own order
	out := make([]Case, 0, len(keep))
	for _, i := range keep {
		out = append(out, cases[i])
	}
	return out
}

// agentName names the agent that replaced the scenario's own ("" none).
func (c Case) agentName() string {
	if c.Agent == nil {
		return ""
	}
	return c.Agent.Name
}
