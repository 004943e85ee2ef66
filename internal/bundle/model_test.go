package bundle

import "testing"

func TestAScriptIsNoProfile(t *testing.T) {
	for _, tc := range []struct{ profile, want string }{
		{ScriptProfile("model.yaml"), ""},
		{"openai", "openai"},
		{"", ""},
	} {
		if got := (Model{Profile: tc.profile}).ProfileName(); got != tc.want {
			t.Errorf("ProfileName of %q = %q, want %q", tc.profile, got, tc.want)
		}
	}
	if !(Receipt{Status: StatusAwaitingReview}).AwaitingReview() || (Receipt{Status: StatusAwaitingReview, Review: &Review{}}).AwaitingReview() || (Receipt{Status: StatusPassed}).AwaitingReview() {
		t.Fatal("AwaitingReview")
	}
}
