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
		// The kinds a session found copied, and their usual variants.
		".docker/config.json": true, "home/.docker/config.json": true, "kubeconfig": true, "deploy/kubeconfig.yaml": true, ".kube/config": true,
		".envrc": true, "web/.htpasswd": true, "app/settings_local.py": true, "local_settings.py": true, ".pgpass": true, ".git-credentials": true,
		"id_ecdsa_sk": true, "keys/id_xmss": true, ".aws/credentials": true, ".vault-token": true,
		"config.json": false, "config": false, "settings.py": false, "id_test.go": false, "id_card.py": false, "docker/config.json": false,
	} {
		if got := redact.SecretFile(path); got != want {
			t.Errorf("SecretFile(%q) = %v, want %v", path, got, want)
		}
	}
}

// A file that gives a password, token or key a literal value is left out
// of a fixture; reading one from the environment, naming one, leaving it
// empty or a placeholder is ordinary, and documents are not read.
func TestAssignsSecret(t *testing.T) {
	for _, tc := range []struct {
		path, text string
		want       bool
	}{
		{"config.ini", "[db]\nhost=localhost\nPASSWORD=hunter2\n", true},
		{"settings.py", "DEBUG = True\nSECRET_KEY = 'django-insecure-8f2k1x'\n", true},
		{"app.json", `{"name": "x", "api_key": "sk-live-1234abcd"}`, true},
		{"deploy.yaml", "auth:\n  token: ghp_a1b2c3d4e5f6g7h8\n", true},
		{"run.sh", "export DB_PASS=x\nexport GITHUB_TOKEN=ghp_0123456789\n", true},
		{"main.go", "package main\n\nconst apiToken = \"tok-123456789\"\n", true},
		{"client.go", "cfg := Config{Password: \"s3cr3t-value\"}\n", true},
		{"main.go", "package main\n\nimport \"os\"\n\nvar token = os.Getenv(\"TOKEN\")\n", false},
		{"main.go", "token := tokenize(src)\npassword = cfg.Password\n", false},
		{"main.go", "const envToken = \"GITHUB_TOKEN\"\nerrMissingToken := \"missing token\"\n", false},
		{"app.py", "self.token = token\npassword = os.environ[\"PASSWORD\"]\n", false},
		{"compose.yaml", "environment:\n  PASSWORD: ${DB_PASSWORD}\n", false},
		{"config.ini", "password=\ntoken = <your token here>\nsecret=changeme\n", false},
		{".env.example", "API_KEY=your-api-key\n", false},
		{"README.md", "Set PASSWORD=hunter2 in config.ini\n", false},
		{"types.ts", "interface Login { password: string; token?: string }\n", false},
		{"tokenizer.go", "type tokenType int\nconst tokenEOF tokenType = 0\n", false},
		{"data.bin", "PASSWORD=hunter2\x00\x01", false},
		{"config.ini", "sort_key=name\nmonkey=banana\n", false},
		{"app.js", "fetch(url, {credentials: \"same-origin\"})\n", false},
		{"echo.go", "HeaderXCSRFToken = \"X-CSRF-Token\"\n", false},
		{"config.ini", "password=Tr0ub4dor&3\nadmin_password=correct-Horse-Battery-Staple!\n", true},
	} {
		if got := redact.AssignsSecret(tc.path, []byte(tc.text)); got != tc.want {
			t.Errorf("AssignsSecret(%s, %q) = %v, want %v", tc.path, tc.text, got, tc.want)
		}
	}
}
