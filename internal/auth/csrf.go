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
// makes one when the file does not exist. The file is created whole or not
// at all (written beside it, then linked into place), readable by its owner
// only; two processes starting at once end up with the same key.
func LoadOrCreateKey(path string) ([]byte, error) {
	key, err := readKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	key = make([]byte, KeySize)
	rand.Read(key)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".key-*")
	if err != nil {
		return nil, fmt.Errorf("create server key %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(hex.EncodeToString(key) + "\n")
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, fmt.Errorf("write server key %s: %w", path, werr)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create server key %s: %w", path, err)
	}
	return readKey(path) // another process may have linked its key first
}

func readKey(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read server key %s: %w", path, err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) != KeySize {
		return nil, fmt.Errorf("server key %s: want %d bytes in hex; delete the file and a new key is made (open forms will need a reload)", path, KeySize)
	}
	return key, nil
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
