package redact_test

import (
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/redact"
)

func TestRedact(t *testing.T) {
	r := redact.FromEnv([]string{"OPENAI_API_KEY=my-very-secret-value", "HOME=/home/x", "GITHUB_TOKEN=abc"}, "literal-secret-123")
	tests := map[string]string{
		"key is my-very-secret-value ok":                                "key is [REDACTED] ok",
		"extra literal-secret-123":                                      "extra [REDACTED]",
		"sk-proj-abcdefghijklmnopqrstuvwxyz0123":                        "[REDACTED]",
		"token ghp_abcdefghijklmnopqrstuvwxyz0123456789 here":           "token [REDACTED] here",
		"Authorization: Bearer eyJhbGciOi.payload.sig":                  "Authorization: Bearer [REDACTED]",
		"AUTHORIZATION: BASIC dXNlcjpwYXNzd29yZA==":                     "AUTHORIZATION: BASIC [REDACTED]",
		"authorization: basic dXNlcjpwYXNz":                             "authorization: basic [REDACTED]",
		"Proxy-Authorization: Basic dXNlcjpwYXNz":                       "Proxy-Authorization: Basic [REDACTED]",
		`{"Authorization": "Basic dXNlcjpwYXNz"}`:                       `{"Authorization": "Basic [REDACTED]"}`,
		"authorization=Basic dXNlcjpwYXNz":                              "authorization=Basic [REDACTED]",
		"Authorization: token abcdef123456":                             "Authorization: token [REDACTED]",
		"AKIAABCDEFGHIJKLMNOP":                                          "[REDACTED]",
		"curl -H 'x: ptk_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcdef'": "curl -H 'x: [REDACTED]'",
		"home is /home/x":                                               "home is /home/x",
		"abc is too short to redact":                                    "abc is too short to redact",
	}
	for in, want := range tests {
		if got := r.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
	if strings.Contains(r.String(`{"api_key":"my-very-secret-value"}`), "secret-value") {
		t.Fatal("value inside JSON not redacted")
	}
}

// Secrets of 6 to 15 characters — shorter than a fragment, as many
// passwords and PINs are — are redacted whole wherever they appear; only
// values under 6 characters are left (they would redact ordinary words).
func TestShortSecretsAreRedacted(t *testing.T) {
	for _, secret := range []string{"s3cr3t", "hunter2x", "pa55-word-1", "fifteen-chars-x"} {
		r := redact.FromEnv([]string{"DB_PASSWORD=" + secret})
		if got := r.String("connect with " + secret + " now"); got != "connect with [REDACTED] now" {
			t.Errorf("a %d-character secret: %q", len(secret), got)
		}
	}
	if got := redact.FromEnv([]string{"PIN_TOKEN=1234"}).String("pin 1234"); got != "pin 1234" {
		t.Errorf("a 4-character value was redacted: %q", got)
	}
	// The local secret of a single-user serve has a shape of its own.
	if got := redact.New().String("open http://127.0.0.1:7070/?token=plk_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcdef"); strings.Contains(got, "plk_AbCd") {
		t.Errorf("the local secret's shape: %q", got)
	}
}

func TestSecretName(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"OPENAI_API_KEY", true},
		{"api_key", true},
		{"GITHUB_TOKEN", true},
		{"DbPassword", true},
		{"MYSQL_PASSWD", true},
		{"aws_secret_access_key", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", true},
		{"MONKEY", true}, // a name that merely contains a word still counts: redacting too much is the safe side
		{"PATH", false},
		{"HOME", false},
		{"GOFLAGS", false},
		{"", false},
		{"Ünïcode_token", true},
	} {
		if got := redact.SecretName(tc.name); got != tc.want {
			t.Errorf("SecretName(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A key was once recorded because it was printed cut or transformed, not
// whole. Any 12 or more of its bytes together are redacted.
func TestFragmentsOfAKeyAreRedacted(t *testing.T) {
	key := "llm-auth-0123456789abcdefXYZ"
	r := redact.New(key)
	tests := []struct{ in, want string }{
		{"key=" + key, "key=[REDACTED]"},
		{"first 20: " + key[:20] + " end", "first 20: [REDACTED] end"},
		{"middle " + key[5:17] + ".", "middle [REDACTED]."},
		{"split " + key[:14] + "\n" + key[14:], "split [REDACTED]\n[REDACTED]"},
		{"eleven " + key[:11] + " is too short", "eleven " + key[:11] + " is too short"},
		{"twice " + key[:12] + key[:12], "twice [REDACTED][REDACTED]"},
		{"unrelated text of any length at all", "unrelated text of any length at all"},
	}
	for _, tc := range tests {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := string(r.Bytes([]byte("x " + key[3:18]))); got != "x [REDACTED]" {
		t.Errorf("Bytes: %q", got)
	}
}

func TestSecretFile(t *testing.T) {
	for path, want := range map[string]bool{
		".env": true, "app/.env.production": true, ".env.example": false, "config/.env.sample": false,
		"deploy/id_rsa": true, "id_ed25519.pub": false, "certs/server.pem": true, "tls/server.key": true, "keys.p12": true,
		"secrets.yaml": true, "gcp/credentials.json": true, ".npmrc": true, ".netrc": true, "terraform.tfstate": true,
		"main.go": false, "go/token/token.go": false, "keyboard.go": false, "README.md": false, "docs/secrets.md.template": false,
	} {
		if got := redact.SecretFile(path); got != want {
			t.Errorf("SecretFile(%q) = %v, want %v", path, got, want)
		}
	}
}
