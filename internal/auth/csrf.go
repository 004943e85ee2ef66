package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the length of a server key, in bytes.
const KeySize = 32

// LoadOrCreateKey reads the server key kept in path (hex, one line), or
// makes one when the file does not exist (loadOrCreate).
func LoadOrCreateKey(path string) ([]byte, error) {
	line, err := loadOrCreate(path, "server key", func() string {
		key := make([]byte, KeySize)
		rand.Read(key)
		return hex.EncodeToString(key)
	})
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(line)
	if err != nil || len(key) != KeySize {
		return nil, fmt.Errorf("server key %s: want %d bytes in hex; delete the file and a new key is made (open forms will need a reload)", path, KeySize)
	}
	return key, nil
}

// LocalPrefix begins a local secret: the secret a single-user dashboard
// asks of every request, since loopback is no login (every local process
// and user reaches it).
const LocalPrefix = "plk_"

// LoadOrCreateLocalSecret reads the local secret kept in path, or makes
// one when the file does not exist (loadOrCreate).
func LoadOrCreateLocalSecret(path string) (string, error) {
	secret, err := loadOrCreate(path, "local secret", func() string {
		s, _ := NewSecret(LocalPrefix)
		return s
	})
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(secret, LocalPrefix) || len(secret) < len(LocalPrefix)+32 {
		return "", fmt.Errorf("local secret %s: want %s and 43 characters; delete the file and a new secret is made (open the new address serve prints)", path, LocalPrefix)
	}
	return secret, nil
}

// ReadLocalSecret reads the local secret a serve keeps in path, for
// proctor's own commands that talk to it.
func ReadLocalSecret(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read the local secret of proctor serve: %w", err)
	}
	return strings.TrimSpace(string(data)), nil
}

// loadOrCreate reads the one line kept in path, or makes it (with make)
// when the file does not exist. The file is created whole or not at all
// (written beside it, then linked into place), readable by its owner only;
// two processes starting at once end up with the same line.
func loadOrCreate(path, what string, make func() string) (string, error) {
	line, err := readLine(path, what)
	if !errors.Is(err, fs.ErrNotExist) {
		return line, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".key-*")
	if err != nil {
		return "", fmt.Errorf("create %s %s: %w", what, path, err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(make() + "\n")
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return "", fmt.Errorf("write %s %s: %w", what, path, werr)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("create %s %s: %w", what, path, err)
	}
	return readLine(path, what) // another process may have linked its own first
}

func readLine(path, what string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read %s %s: %w", what, path, err)
	}
	return strings.TrimSpace(string(data)), nil
}

// CSRFToken is the anti-forgery token of a binding: a signed-in session
// ("session:" and its hash) or a browser's random id ("browser:" and the
// id). It is an HMAC under the server key, so whoever can plant a cookie in
// the browser (a page on another port of the same host can) still cannot
// make a token that matches it.
func CSRFToken(key []byte, binding string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("proctor-csrf\x00" + binding))
	return hex.EncodeToString(mac.Sum(nil))
}

// CheckCSRFToken reports whether sent is the token of binding.
func CheckCSRFToken(key []byte, binding, sent string) bool {
	return subtle.ConstantTimeCompare([]byte(sent), []byte(CSRFToken(key, binding))) == 1
}
