package yamldoc

import "testing"

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"abc", "abc", 0}, {"", "abc", 3}, {"abc", "", 3}, {"taks", "task", 1}, {"taks", "tags", 1},
		{"kitten", "sitting", 3}, {"ca", "abc", 3}, {"max_turn", "max_turns", 1},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestEnvName(t *testing.T) {
	for s, want := range map[string]bool{"OPENAI_API_KEY": true, "_x1": true, "a": true, "": false, "1A": false, "A-B": false, "A B": false, "É": false, "A=B": false, "$A": false} {
		if EnvName(s) != want {
			t.Errorf("EnvName(%q) = %v, want %v", s, !want, want)
		}
	}
}
