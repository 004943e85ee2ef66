package redact

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
)

// SecretFile reports whether a file, by its (slash) path, looks like one
// that holds secrets — an .env file, a private key, a credentials or token
// file, a tool's login (Docker's, kubectl's, a database's) — so that a copy
// proctor makes of a tree (a scenario's fixture) leaves it out. Examples
// and templates of them (.env.example) are kept.
func SecretFile(path string) bool {
	path = strings.ToLower(path)
	name := path[strings.LastIndex(path, "/")+1:]
	parent := ""
	if i := strings.LastIndex(path, "/"); i >= 0 {
		parent = path[strings.LastIndex(path[:i], "/")+1 : i]
	}
	for _, keep := range []string{".example", ".sample", ".template", ".dist", ".pub"} {
		if strings.HasSuffix(name, keep) {
			return false
		}
	}
	switch {
	case name == ".env" || strings.HasPrefix(name, ".env.") || name == ".envrc",
		name == ".netrc" || name == "_netrc" || name == ".npmrc" || name == ".pypirc" || name == ".git-credentials" || name == ".pgpass",
		name == ".htpasswd" || name == ".dockercfg" || name == ".vault-token" || name == ".s3cfg" || name == ".boto",
		strings.Contains(name, "kubeconfig"),
		parent == ".kube" && name == "config",
		parent == ".docker" && name == "config.json",
		parent == ".aws" && (name == "config" || name == "credentials"),
		name == "settings_local.py" || name == "local_settings.py",
		// ssh keys: id_rsa, id_ed25519, id_ecdsa_sk… (no extension)
		strings.HasPrefix(name, "id_") && !strings.Contains(name, "."):
		return true
	}
	for _, ext := range []string{".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".tfstate", ".tfvars", ".ppk", ".asc", ".gpg"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	// secrets.yaml, credentials.json: not a source file that merely names
	// a token (go/token's token.go).
	switch strings.TrimSuffix(name, filepath.Ext(name)) {
	case "secret", "secrets", "credential", "credentials", "passwords", "service-account", "serviceaccount":
		return true
	}
	return false
}

// assignment is a name given a value on a line: `NAME=value`,
// `name: "value"`, `name := 'value'`, `"name": "value"`.
var assignment = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.\-]*)["']?[ \t]*(?::=|=|:)[ \t]*("[^"\n]*"|'[^'\n]*'|` + "`[^`\\n]*`" + `|[^\s"'` + "`" + `#;,(){}\[\]]+)`)

// sourceExt reports whether a file's unquoted values are code (a
// variable, a call), not text: in it only a quoted literal counts.
func sourceExt(ext string) bool {
	switch ext {
	case ".go", ".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".rb", ".java", ".kt", ".rs", ".c", ".h", ".cc", ".cpp", ".hpp",
		".cs", ".php", ".swift", ".scala", ".lua", ".dart", ".ex", ".exs", ".erl", ".hs":
		return true
	}
	return false
}

// proseExt reports whether a file is a document, where an assignment is
// an example to read.
func proseExt(ext string) bool {
	switch ext {
	case ".md", ".rst", ".txt", ".adoc", ".html", ".htm":
		return true
	}
	return false
}

// AssignsSecret reports whether a file's content gives a password, token
// or key a literal value — `PASSWORD=hunter2` in a config.ini,
// `SECRET_KEY = 'django-…'` in settings, `"api_key": "sk-…"` — which a copy
// of the tree leaves out. Reading one from the environment
// (`os.Getenv("TOKEN")`, `${TOKEN}`) is ordinary source, and so is a name
// of one (`"GITHUB_TOKEN"`), an empty value or a placeholder; documents
// and binary files are not read.
func AssignsSecret(path string, data []byte) bool {
	ext := strings.ToLower(filepath.Ext(path))
	if proseExt(ext) || len(data) > 1<<20 || bytes.IndexByte(data, 0) >= 0 {
		return false
	}
	source := sourceExt(ext)
	for _, m := range assignment.FindAllSubmatch(data, -1) {
		if secretName(string(m[1])) && literalSecret(string(m[2]), source) {
			return true
		}
	}
	return false
}

// secretName reports whether a name (its last dotted part: self.token,
// cfg.Password) names a secret.
func secretName(name string) bool {
	name = strings.ToLower(name[strings.LastIndex(name, ".")+1:])
	name = strings.NewReplacer("_", "", "-", "").Replace(name)
	for _, s := range []string{"password", "passwd", "pwd", "secret", "token", "apikey", "secretkey", "accesskey", "privatekey", "authkey"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// envName is a value that names a variable rather than holding a secret;
// words is one that is words (a header's name, an option: same-origin).
var (
	envName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	words   = regexp.MustCompile(`^[A-Za-z]+([-_.][A-Za-z]+)*$`)
)

// literalSecret reports whether a value is a literal that could be a
// secret: quoted (or, outside source, bare), four or more characters, no
// space, not a reference, a name or a placeholder, and with a digit in it
// or twelve characters or more that are not words.
func literalSecret(v string, source bool) bool {
	quoted := len(v) >= 2 && strings.ContainsRune("\"'`", rune(v[0])) && v[len(v)-1] == v[0]
	if quoted {
		v = v[1 : len(v)-1]
	} else if source {
		return false
	}
	lower := strings.ToLower(v)
	switch {
	case len(v) < 4, strings.ContainsAny(v, " \t$%{}<>()[]"), envName.MatchString(v):
		return false
	case lower == "true" || lower == "false" || lower == "null" || lower == "none" || lower == "nil" || lower == "undefined":
		return false
	case !strings.ContainsAny(v, "0123456789") && (len(v) < 12 || words.MatchString(v)):
		return false
	}
	for _, placeholder := range []string{"example", "changeme", "placeholder", "dummy", "xxxx", "****", "your", "redacted", "replace"} {
		if strings.Contains(lower, placeholder) {
			return false
		}
	}
	return true
}
