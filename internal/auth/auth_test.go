package auth

import (
	"strings"
	"testing"
	"time"
)

func cheap() Params { return Params{Time: 1, Memory: 64, Threads: 1} }

func TestRoleAllows(t *testing.T) {
	tests := []struct {
		have, need Role
		want       bool
	}{
		{Viewer, Viewer, true},
		{Viewer, Reviewer, false},
		{Viewer, Admin, false},
		{Reviewer, Viewer, true},
		{Reviewer, Reviewer, true},
		{Reviewer, Admin, false},
		{Admin, Viewer, true},
		{Admin, Admin, true},
		{Role(""), Viewer, false},
		{Role("root"), Viewer, false},
	}
	for _, tt := range tests {
		if got := tt.have.Allows(tt.need); got != tt.want {
			t.Errorf("%q.Allows(%q) = %v, want %v", tt.have, tt.need, got, tt.want)
		}
	}
}

func TestParseRole(t *testing.T) {
	for _, ok := range []string{"viewer", "reviewer", "admin"} {
		if _, err := ParseRole(ok); err != nil {
			t.Errorf("ParseRole(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Admin", "root", "viewer "} {
		if _, err := ParseRole(bad); err == nil || !strings.Contains(err.Error(), "viewer, reviewer, admin") {
			t.Errorf("ParseRole(%q) = %v, want an error listing the roles", bad, err)
		}
	}
}

func TestValidName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"alice", true}, {"a.b-c_d9", true}, {"9lives", true},
		{"", false}, {"-x", false}, {"a b", false}, {"ä", false}, {"a/b", false}, {strings.Repeat("a", 65), false},
	}
	for _, tt := range tests {
		if err := ValidName(tt.name); (err == nil) != tt.ok {
			t.Errorf("ValidName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

func TestHashAndVerify(t *testing.T) {
	h, err := HashPassword("correct horse battery", cheap())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=64,t=1,p=1$") || strings.Contains(h, "correct") {
		t.Fatalf("hash %q is not the expected PHC string", h)
	}
	h2, _ := HashPassword("correct horse battery", cheap())
	if h == h2 {
		t.Error("two hashes of one password are equal: the salt is not random")
	}
	tests := []struct {
		pw   string
		want bool
	}{{"correct horse battery", true}, {"correct horse batterY", false}, {"", false}}
	for _, tt := range tests {
		got, err := VerifyPassword(tt.pw, h)
		if err != nil || got != tt.want {
			t.Errorf("VerifyPassword(%q) = %v, %v; want %v", tt.pw, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=64,t=1,p=1$AAAA$AAAA", "$argon2id$v=18$m=64,t=1,p=1$AAAA$AAAA", "$argon2id$v=19$m=99999999,t=1,p=1$AAAA$AAAA", "$argon2id$v=19$m=64,t=1,p=1$!!$AAAA"} {
		if _, err := VerifyPassword("x", bad); err != ErrBadHash {
			t.Errorf("VerifyPassword(hash %q) err = %v, want ErrBadHash", bad, err)
		}
	}
}

func TestCheckPassword(t *testing.T) {
	if err := CheckPassword("short"); err == nil {
		t.Error("a 5-character password was accepted")
	}
	if err := CheckPassword("long enough pw"); err != nil {
		t.Error(err)
	}
}

func TestSecrets(t *testing.T) {
	a, _ := NewSecret(TokenPrefix)
	b, _ := NewSecret(TokenPrefix)
	if a == b || !strings.HasPrefix(a, "ptk_") || len(a) != 4+43 {
		t.Fatalf("secrets %q %q", a, b)
	}
	if HashSecret(a) == HashSecret(b) || len(HashSecret(a)) != 64 || HashSecret(a) != HashSecret(a) {
		t.Error("HashSecret is not a stable 64-hex digest")
	}
}

func TestLimiter(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	l := NewLimiter(3, time.Minute, func() time.Time { return now })
	for range 3 {
		if ok, _ := l.Try([]string{"addr:a"}, nil); !ok {
			t.Fatal("blocked before the limit")
		}
		l.Try(nil, []string{"addr:a", "user:x"})
	}
	if ok, wait := l.Try([]string{"addr:a"}, nil); ok || wait != time.Minute {
		t.Fatalf("after 3 failures: allowed=%v wait=%v; want refused, 1m", ok, wait)
	}
	if ok, _ := l.Try([]string{"addr:b"}, nil); !ok {
		t.Error("another address is blocked")
	}
	if l.Failures("user:x") != 3 {
		t.Errorf("user failures = %d, want 3", l.Failures("user:x"))
	}
	now = now.Add(time.Minute)
	if ok, _ := l.Try([]string{"addr:a"}, nil); !ok {
		t.Error("still blocked after the window")
	}
	l.Try(nil, []string{"addr:a"})
	l.Succeed("addr:a")
	if l.Failures("addr:a") != 0 {
		t.Error("a success did not clear the failures")
	}
}

func TestLimiterTry(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	l := NewLimiter(2, time.Minute, func() time.Time { return now })
	keys := []string{"addr:a", "user:x"}
	for i := range 2 {
		if ok, _ := l.Try(keys, keys); !ok {
			t.Fatalf("attempt %d refused below the limit", i+1)
		}
	}
	if ok, wait := l.Try(keys, keys); ok || wait != time.Minute {
		t.Fatalf("third attempt: ok=%v wait=%v; want refused for 1m", ok, wait)
	}
	// A success takes its attempt back.
	l.Forgive("addr:a")
	if l.Failures("addr:a") != 1 || l.Failures("user:x") != 2 {
		t.Errorf("after Forgive: addr %d, user %d; want 1, 2", l.Failures("addr:a"), l.Failures("user:x"))
	}
	if ok, _ := l.Try([]string{"addr:a"}, []string{"addr:a"}); !ok {
		t.Error("a forgiven attempt still counts")
	}
}
