package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/store"
)

// Signins checks sign-ins against the accounts of Store, limited by
// address and by name (Limiter), and makes a web session of each one that
// is right, for TTL.
type Signins struct {
	Store   *store.Store
	Limiter *Limiter
	TTL     time.Duration
	Now     func() time.Time
}

// ErrWrongPassword is a sign-in refused: the same for an unknown user, a
// wrong password and a disabled account.
var ErrWrongPassword = errors.New("wrong user name or password")

// Limited is a sign-in not tried: too many failed from where it came, or
// for its name from that address; Wait is how long until the next.
type Limited struct{ Wait time.Duration }

func (e *Limited) Error() string {
	return fmt.Sprintf("too many failed sign-ins; try again in %s", e.Wait.Round(time.Second)+time.Second)
}

// A WebSession is a signed-in person's: the secret their cookie holds (its
// hash is kept), who, and until when.
type WebSession struct {
	Secret  string
	User    store.User
	Expires time.Time
}

// dummyHash is verified against when the user does not exist, so an
// unknown name costs as much time as a wrong password.
const dummyHash = "$argon2id$v=19$m=65536,t=3,p=2$c2FsdHNhbHRzYWx0c2FsdA$q0l5rZ7Cwfp+E2dWxYb7m9Xx1X3yVt9FZJ8uQ0yJrYI"

// SignIn checks name and password, signing in from addr: a *Limited when
// too many sign-ins failed, ErrWrongPassword when they are not right, else
// a new web session.
func (s *Signins) SignIn(ctx context.Context, name, password, addr string) (WebSession, error) {
	name = strings.TrimSpace(name)
	addrKey, pairKey, nameKey := "addr:"+addr, "pair:"+name+"@"+addr, "user:"+name
	// Failures against a name from many addresses block it only for
	// addresses that have failed themselves, so a flood cannot lock out the
	// owner signing in from a clean address.
	block := []string{addrKey, pairKey}
	if s.Limiter.Failures(addrKey) > 0 {
		block = append(block, nameKey)
	}
	if ok, wait := s.Limiter.Try(block, []string{addrKey, pairKey, nameKey}); !ok {
		return WebSession{}, &Limited{wait}
	}
	u, err := s.Store.GetUser(ctx, name)
	hash := u.PasswordHash
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			return WebSession{}, fmt.Errorf("sign in %q: %w", name, err)
		}
		hash = dummyHash
	}
	ok, verr := VerifyPassword(password, hash)
	if err != nil || verr != nil || !ok || u.Disabled {
		return WebSession{}, ErrWrongPassword
	}
	s.Limiter.Forgive(addrKey)
	s.Limiter.Succeed(pairKey, nameKey)
	secret, err := NewSecret(SessionPrefix)
	if err != nil {
		return WebSession{}, err
	}
	now := s.Now()
	expires := now.Add(s.TTL)
	if err := s.Store.AddWebSession(ctx, HashSecret(secret), u.Name, addr, expires); err != nil {
		return WebSession{}, fmt.Errorf("sign in %q: %w", name, err)
	}
	_ = s.Store.PurgeWebSessions(ctx, now) // the expired ones; failing leaves them to the next
	return WebSession{Secret: secret, User: u, Expires: expires}, nil
}
