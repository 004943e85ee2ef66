// Package auth owns what sharing a proctor host needs besides storage: roles
// and what each may do, password hashing (argon2id), random secrets for web
// sessions and API tokens, and sign-in rate limiting.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/crypto/argon2"
)

// Role is what a user may do. Each role may do everything the one before it
// may.
type Role string

// The roles, weakest first.
const (
	Viewer   Role = "viewer"   // reads runs, sessions, suites and transcripts
	Reviewer Role = "reviewer" // also approves or rejects diffs and approval requests
	Admin    Role = "admin"    // also launches and stops runs and manages users
)

// Roles lists the roles, weakest first.
func Roles() []Role { return []Role{Viewer, Reviewer, Admin} }

// ParseRole reads a role name.
func ParseRole(s string) (Role, error) {
	for _, r := range Roles() {
		if string(r) == s {
			return r, nil
		}
	}
	return "", fmt.Errorf("role %q is not one of viewer, reviewer, admin", s)
}

func (r Role) rank() int {
	for i, x := range Roles() {
		if x == r {
			return i + 1
		}
	}
	return 0
}

// Allows reports whether a user with role r may do what needs role need.
func (r Role) Allows(need Role) bool { return r.rank() > 0 && r.rank() >= need.rank() }

// ValidName reports why name cannot be a user name, or nil: 1 to 64 letters,
// digits, '.', '-' or '_', starting with a letter or digit.
func ValidName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("user name %q must be 1 to 64 characters", name)
	}
	for i, c := range name {
		ok := c < unicode.MaxASCII && (unicode.IsLetter(c) || unicode.IsDigit(c) || (i > 0 && strings.ContainsRune(".-_", c)))
		if !ok {
			return fmt.Errorf("user name %q may hold only letters, digits, '.', '-' and '_', and must start with a letter or digit", name)
		}
	}
	return nil
}

// MinPasswordLen is the shortest password accepted.
const MinPasswordLen = 10

// CheckPassword reports why a new password is unacceptable, or nil.
func CheckPassword(pw string) error {
	if len(pw) < MinPasswordLen {
		return fmt.Errorf("the password must be at least %d characters", MinPasswordLen)
	}
	if len(pw) > 1024 {
		return errors.New("the password must be at most 1024 characters")
	}
	return nil
}

// Params are argon2id's cost parameters.
type Params struct {
	Time    uint32 // passes
	Memory  uint32 // KiB
	Threads uint8
}

// DefaultParams follow RFC 9106's second recommended option (64 MiB, 3 passes).
func DefaultParams() Params { return Params{Time: 3, Memory: 64 * 1024, Threads: 2} }

const (
	saltLen = 16
	keyLen  = 32
)

// HashPassword hashes pw with argon2id and a random salt, in the PHC string
// format: $argon2id$v=19$m=65536,t=3,p=2$<salt>$<key>.
func HashPassword(pw string, p Params) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	key := argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, keyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads, enc.EncodeToString(salt), enc.EncodeToString(key)), nil
}

// ErrBadHash is returned for a stored hash that is not one HashPassword makes.
var ErrBadHash = errors.New("stored password hash is not an argon2id PHC string")

// VerifyPassword reports whether pw matches hash, in constant time.
func VerifyPassword(pw, hash string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, ErrBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, ErrBadHash
	}
	var p Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil || p.Time == 0 || p.Threads == 0 || p.Memory > 1<<21 {
		return false, ErrBadHash
	}
	enc := base64.RawStdEncoding
	salt, err := enc.DecodeString(parts[4])
	if err != nil {
		return false, ErrBadHash
	}
	want, err := enc.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, ErrBadHash
	}
	got := argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// NewSecret returns a random secret with a prefix naming its kind ("pst_" for
// a session, "ptk_" for an API token), 32 random bytes in URL-safe base64.
// The prefix lets secret scanners and the redactor recognise it.
func NewSecret(prefix string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("new secret: %w", err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// Prefixes of the secrets proctor hands out.
const (
	SessionPrefix = "pst_"
	TokenPrefix   = "ptk_"
)

// HashSecret is what is stored for a session id or an API token: its SHA-256
// in hex. The secrets are long and random, so a plain hash suffices.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
