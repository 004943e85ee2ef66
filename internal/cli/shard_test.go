package cli

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/suite"
)

// A suite run as 4 shards in 4 processes at once, each on a machine of
// its own (its own data folder; two of them packed) pushing its runs to the
// team's host, is the same suite there as one unsharded run of the same
// scenarios pushed too: the same matrix, each case run once.
func TestAShardedSuiteIsTheSuite(t *testing.T) {
	host := t.TempDir()
	_, srv := serveChild(t, host, t.TempDir())
	url := srv.url
	var cmds []*exec.Cmd
	for k := 1; k <= 4; k++ {
		args := []string{"scenario", "run", "--sandbox", "off", "--repeat", "2", "--quiet", "--shard", fmt.Sprintf("%d/4", k), "--suite", "suite-sharded", "--push", url}
		if k%2 == 0 {
			args = append(args, "--pack")
		}
		cmd := proctorChild(t, []string{"PROCTOR_DATA=" + t.TempDir(), "PROCTOR_TOKEN=" + srv.secret}, append(args, "../../examples/scenarios")...)
		t.Cleanup(func() { cmd.Process.Kill() })
		cmds = append(cmds, cmd)
	}
	cases := 0
	for k, cmd := range cmds {
		err := cmd.Wait()
		out := cmd.Stdout.(*bytes.Buffer).String()
		var n, all int
		if _, scanErr := fmt.Sscanf(out[strings.Index(out, "shard "):], fmt.Sprintf("shard %d/4: %%d of its %%d cases", k+1), &n, &all); err != nil || scanErr != nil || all != 10 ||
			!strings.Contains(out, "pushed ") || strings.Contains(out, "FAILED") {
			t.Fatalf("shard %d/4: %v %v\n%s", k+1, err, scanErr, out)
		}
		cases += n
	}
	if cases != 10 {
		t.Fatalf("the shards ran %d cases, want 10", cases)
	}
	if r := invoke(t, map[string]string{"PROCTOR_DATA": t.TempDir(), "PROCTOR_TOKEN": srv.secret}, "scenario", "run", "--sandbox", "off", "--repeat", "2", "--quiet", "--suite", "suite-whole", "--push", url, "../../examples/scenarios"); r.code != ExitOK {
		t.Fatalf("unsharded: %+v", r)
	}

	st, err := store.Open(context.Background(), filepath.Join(host, "proctor.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	matrix := func(suite string) []store.SuiteRow {
		rows, err := st.SuiteRows(context.Background(), suite)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows { // what each run spent differs from run to run
			rows[i].Tokens, rows[i].Millis, rows[i].Cost = 0, 0, 0
		}
		return rows
	}
	sharded, whole := matrix("suite-sharded"), matrix("suite-whole")
	if len(whole) != 5 || !reflect.DeepEqual(sharded, whole) {
		t.Fatalf("sharded matrix:\n%+v\nunsharded:\n%+v", sharded, whole)
	}
	if r := invoke(t, map[string]string{"PROCTOR_DATA": host}, "compare", "--fail-on", "any", "suite-whole", "suite-sharded"); r.code != ExitOK || !strings.Contains(r.stdout, "(5 unchanged") {
		t.Fatalf("compare the two: %+v", r)
	}
}

func TestShardFlagsAndTheSuiteIDFromCI(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--shard", "5/4"}, `--shard "5/4": want K/N`},
		{nil, []string{"--shard", "1/4"}, "--shard 1/4: give --suite ID, the same for every shard"},
		{nil, []string{"--suite", "../x"}, `--suite "../x": use letters, digits`},
		{map[string]string{"GITHUB_RUN_ID": "1/../../x"}, []string{"--shard", "1/2"}, `$GITHUB_RUN_ID "1/../../x" does not make a suite id`},
	} {
		env := map[string]string{"PROCTOR_DATA": t.TempDir()}
		for k, v := range tc.env {
			env[k] = v
		}
		r := invoke(t, env, append(append([]string{"scenario", "run"}, tc.args...), "../../examples/scenarios/multi-turn")...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v %v: exit %d, %q; want %q", tc.env, tc.args, r.code, r.stderr, tc.want)
		}
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"GITHUB_RUN_ID": "8123", "GITHUB_RUN_ATTEMPT": "2"}, "suite-github-8123-2"},
		{map[string]string{"CI_PIPELINE_ID": "77"}, "suite-gitlab-77"},
		{map[string]string{"BUILDKITE_BUILD_ID": "0190-ab"}, "suite-buildkite-0190-ab"},
	} {
		got, err := suiteIDOf("", suiteShard(t, "1/2"), func(k string) string { return tc.env[k] })
		if err != nil || got != tc.want {
			t.Errorf("%v: %q %v; want %q", tc.env, got, err, tc.want)
		}
	}
	if got, err := suiteIDOf("", suiteShard(t, "1/1"), func(string) string { return "" }); got != "" || err != nil {
		t.Errorf("one shard of one: %q %v", got, err)
	}
}

func suiteShard(t *testing.T, s string) suite.Shard {
	t.Helper()
	sh, err := suite.ParseShard(s)
	if err != nil {
		t.Fatal(err)
	}
	return sh
}

// Shards on two machines push their packs to the team's host: the host
// has the one suite; pushing again sends nothing; a bad URL or path is a
// usage error.
func TestShardsPushToTheHost(t *testing.T) {
	host := t.TempDir()
	_, srv := serveChild(t, host, t.TempDir())
	url := srv.url
	for k := 1; k <= 2; k++ {
		env := map[string]string{"PROCTOR_DATA": t.TempDir(), "PROCTOR_TOKEN": srv.secret} // each machine its own data folder
		r := invoke(t, env, "scenario", "run", "--sandbox", "off", "--quiet", "--pack", "--shard", fmt.Sprintf("%d/2", k), "--suite", "suite-pushed",
			"--push", url, "../../examples/scenarios")
		if r.code != ExitOK || !strings.Contains(r.stdout, "pushed ") || !strings.Contains(r.stdout, "suite-pushed.shard-") {
			t.Fatalf("shard %d: %+v", k, r)
		}
		if k == 2 { // the same pack again, by proctor push
			pack := filepath.Join(env["PROCTOR_DATA"], "runs", "suite-pushed.shard-2-of-2.tar")
			// With no token, a push to this machine's loopback takes the
			// local secret of the serve whose data folder --data names.
			if r := invoke(t, env, "push", "--token-env", "", "--data", host, url, pack); r.code != ExitOK || !strings.Contains(r.stdout, "already on the host") {
				t.Fatalf("push again: %+v", r)
			} // Without it, the host refuses, and says what it needs.
			if r := invoke(t, env, "push", "--token-env", "", url, pack); r.code == ExitOK || !strings.Contains(r.stdout+r.stderr, "needs its secret") {
				t.Fatalf("push without the local secret: %+v", r)
			}

		}
	}
	st, err := store.Open(context.Background(), filepath.Join(host, "proctor.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.SuiteRows(context.Background(), "suite-pushed")
	if err != nil || len(rows) != 5 {
		t.Fatalf("the host's suite: %d rows, %v", len(rows), err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"push", "proctor.lan", "x"}, `"proctor.lan": give the host's http:// or https:// address`},
		{[]string{"push", url}, "name the host's URL and at least one PATH"},
		{[]string{"push", url, "/does/not/exist"}, "push /does/not/exist"},
		{[]string{"push", url, "../../go.mod"}, "not a pack (*.tar), a run folder or a data folder"},
		{[]string{"push", "--token-env", "ptk-a1b2.c3", url, "x"}, "give the name of the variable that holds the token"},
	} {
		if r := invoke(t, nil, tc.args...); r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d %q; want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}
