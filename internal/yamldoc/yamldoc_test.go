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
