package auth_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/proctor-dev/proctor/internal/auth"
)

func TestCSRFTokenDependsOnKeyAndBinding(t *testing.T) {
	k1, k2 := make([]byte, auth.KeySize), make([]byte, auth.KeySize)
	k2[0] = 1
	tok := auth.CSRFToken(k1, "browser:abc")
	tests := []struct {
		name    string
		key     []byte
		binding string
		sent    string
		want    bool
	}{
		{"its own token", k1, "browser:abc", tok, true},
		{"another binding", k1, "browser:abd", tok, false},
		{"another key", k2, "browser:abc", tok, false},
		{"the planted cookie value itself", k1, "browser:abc", "abc", false},
		{"empty", k1, "browser:abc", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := auth.CheckCSRFToken(tc.key, tc.binding, tc.sent); got != tc.want {
				t.Fatalf("CheckCSRFToken = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLoadOrCreateKeyIsStableAndPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.key")
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := auth.LoadOrCreateKey(path)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		}()
	}
	wg.Wait()
	for _, k := range keys[1:] {
		if string(k) != string(keys[0]) || len(k) != auth.KeySize {
			t.Fatal("processes starting at once got different keys")
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v", fi.Mode(), err)
	}
	again, err := auth.LoadOrCreateKey(path)
	if err != nil || string(again) != string(keys[0]) {
		t.Fatal("the key changed on a second start")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("left temporary files: %v", entries)
	}
	os.WriteFile(path, []byte("short\n"), 0o600)
	if _, err := auth.LoadOrCreateKey(path); err == nil || !strings.Contains(err.Error(), "delete the file") {
		t.Fatalf("a damaged key: %v", err)
	}
}
