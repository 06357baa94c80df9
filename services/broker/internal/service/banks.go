package service

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net/mail"
	"strings"
	"sync"
	"time"

	"fris.dev/pkg/authheader"
	"fris.dev/pkg/identity"
	"fris.dev/pkg/ratelimit"
	"fris.dev/pkg/rpcerr"
	"fris.dev/services/broker/internal/storage"
)

// newToken is a bank token: 32 random bytes as 64 hex characters. With 256
// bits of entropy a single SHA-256 is a sound stored form, and a lookup by
// hash is one store read.
func newToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

func hashToken(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// newCode is an 8-digit activation code.
func newCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(100_000_000))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%08d", n.Int64()), nil
}

// bankToken is the bank token of the Authorization value the gateway
// passed on ("Samply <token>" or bare); activationCode is the code of a
// "SamplyRegistration <code>" one.
func bankToken(ctx context.Context) string {
	return authheader.Samply(identity.Incoming(ctx, "authorization"))
}

func activationCode(ctx context.Context) string {
	return authheader.SamplyRegistration(identity.Incoming(ctx, "authorization"))
}

// normalEmail checks a bank's email (a bare address) and lower-cases it:
// banks are one per address, whatever its case.
func normalEmail(email string) (string, error) {
	// Checked before parsing: an id from a path may be any bytes, and the
	// answer to those is InvalidArgument, never a parser's surprise.
	if len(email) > 254 || !printable(email) {
		return "", rpcerr.New(rpcerr.ErrInvalid, "%.64q is not an email address", email)
	}
	e := strings.TrimSpace(email)
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e || len(e) > 254 || strings.ContainsAny(e, "/ ") {
		return "", rpcerr.New(rpcerr.ErrInvalid, "%q is not an email address", email)
	}
	return strings.ToLower(e), nil
}

// Register registers a bank; in activation-code mode the first call sends
// a code and reports activationRequired.
func (s *Service) Register(ctx context.Context, email string) (token string, activationRequired bool, err error) {
	email, err = normalEmail(email)
	if err != nil {
		return "", false, err
	}
	if _, err := s.store.Bank(ctx, email); err == nil {
		return "", false, rpcerr.New(storage.ErrExists, "bank %s is registered already", email)
	} else if !errors.Is(err, storage.ErrNotFound) {
		return "", false, err
	}
	if s.cfg.Registration == ModeActivationCode {
		code := activationCode(ctx)
		if code == "" {
			return "", true, s.sendCode(ctx, email)
		}
		if err := s.checkCode(ctx, email, code); err != nil {
			return "", false, err
		}
	}
	token, err = newToken()
	if err != nil {
		return "", false, err
	}
	b := storage.Bank{Email: email, TokenHash: hashToken(token), Status: storage.BankPending, RegisteredAt: s.now().Unix()}
	if err := s.store.CreateBank(ctx, b); err != nil {
		if errors.Is(err, storage.ErrExists) {
			return "", false, rpcerr.New(storage.ErrExists, "bank %s is registered already", email)
		}
		return "", false, err
	}
	s.log.InfoContext(ctx, "bank registered, waiting for approval", "bank", email)
	return token, false, nil
}

func (s *Service) sendCode(ctx context.Context, email string) error {
	// Each anonymous PUT would mail a new code: a few per address and per
	// mailbox, then 429.
	if err := s.cfg.Guards.ActivationMail.Spend(ctx, email); err != nil {
		return err
	}
	code, err := newCode()
	if err != nil {
		return err
	}
	a := storage.Activation{Email: email, CodeHash: hashToken(code), Created: s.now().Unix()}
	if err := s.store.PutActivation(ctx, a, s.cfg.ActivationTTL); err != nil {
		return err
	}
	if err := s.mail.SendActivation(ctx, email, code); err != nil {
		s.log.ErrorContext(ctx, "sending the activation code failed", "bank", email, "err", err)
		return rpcerr.Errorf(unavailable, "the activation code could not be sent; try again later")
	}
	return nil
}

func (s *Service) checkCode(ctx context.Context, email, code string) error {
	at, err := s.cfg.Guards.ActivationCode.Begin(ctx, email, false)
	if err != nil {
		return err
	}
	a, err := s.store.Activation(ctx, email)
	if err == nil && s.now().Sub(time.Unix(a.Created, 0)) > s.cfg.ActivationTTL {
		// The store's TTL removes it soon; until then it is expired all the same.
		err = storage.ErrNotFound
	}
	if errors.Is(err, storage.ErrNotFound) {
		at.Failed(ctx)
		return rpcerr.New(rpcerr.ErrUnauthenticated, "no activation is pending for %s (or its code expired): register again without a code", email)
	}
	if err != nil {
		at.Cancel(ctx)
		return err
	}
	if subtle.ConstantTimeCompare([]byte(hashToken(code)), []byte(a.CodeHash)) == 1 {
		at.Succeeded(ctx)
		return nil
	}
	at.Failed(ctx)
	a.Attempts++
	if a.Attempts >= s.cfg.MaxActivationAttempts {
		err = s.store.DeleteActivation(ctx, email)
	} else {
		remaining := s.cfg.ActivationTTL - s.now().Sub(time.Unix(a.Created, 0))
		if remaining < time.Second {
			remaining = time.Second
		}
		err = s.store.UpdateActivation(ctx, a, remaining)
	}
	if err != nil && !errors.Is(err, storage.ErrNotFound) && !errors.Is(err, storage.ErrConflict) {
		return err
	}
	return rpcerr.New(rpcerr.ErrUnauthenticated, "wrong activation code")
}

// bankForEmail is the bank of a path's email, checked against the caller's
// token: ErrNotFound when there is no such bank, ErrMismatch when the
// token is missing or not the bank's.
func (s *Service) bankForEmail(ctx context.Context, email string) (storage.Bank, error) {
	e, err := normalEmail(email)
	if err != nil {
		return storage.Bank{}, err
	}
	tok := bankToken(ctx)
	// The bank's own token, verified a moment ago (the token cache): its
	// holder is not refused because strangers guess. The bank is read all
	// the same, for its current status.
	var at *ratelimit.Attempt
	if b, ok := s.tokens.get(hashToken(tok), s.now()); tok == "" || !ok || b.Email != e {
		// Before the lookup: a refusal is the same for a bank that does
		// not exist.
		if at, err = s.cfg.Guards.BankToken.Begin(ctx, e, false); err != nil {
			return storage.Bank{}, err
		}
	}
	b, err := s.store.Bank(ctx, e)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			at.Failed(ctx)
		} else {
			at.Cancel(ctx)
		}
		return storage.Bank{}, notFound(err, "no bank %s", e)
	}
	if tok == "" || subtle.ConstantTimeCompare([]byte(hashToken(tok)), []byte(b.TokenHash)) != 1 {
		at.Failed(ctx)
		return b, errMismatch
	}
	at.Succeeded(ctx)
	s.tokens.put(b.TokenHash, b, s.now())
	return b, nil
}

var errMismatch = errors.New("token does not belong to the bank")

// Status tells an active bank (true) from a pending one.
func (s *Service) Status(ctx context.Context, email string) (active bool, err error) {
	b, err := s.bankForEmail(ctx, email)
	if errors.Is(err, errMismatch) {
		return false, rpcerr.New(rpcerr.ErrPermission, "the token does not belong to %s", b.Email)
	}
	if err != nil {
		return false, err
	}
	return b.Status == storage.BankActive && b.SiteID != "", nil
}

// Delete removes a bank at its own request.
func (s *Service) Delete(ctx context.Context, email string) error {
	b, err := s.bankForEmail(ctx, email)
	if errors.Is(err, errMismatch) {
		return rpcerr.New(rpcerr.ErrUnauthenticated, "the token does not belong to %s", b.Email)
	}
	if err != nil {
		return err
	}
	return s.deleteBank(ctx, b)
}

func (s *Service) deleteBank(ctx context.Context, b storage.Bank) error {
	if err := s.store.DeleteBank(ctx, b.Email); err != nil {
		return notFound(err, "no bank %s", b.Email)
	}
	s.tokens.drop(b.TokenHash)
	s.log.InfoContext(ctx, "bank deleted", "bank", b.Email)
	return nil
}

// caller is the bank whose token the call carries.
func (s *Service) caller(ctx context.Context) (storage.Bank, error) {
	tok := bankToken(ctx)
	if tok == "" {
		return storage.Bank{}, rpcerr.New(rpcerr.ErrUnauthenticated, "a bank token is required (Authorization: Samply <token>)")
	}
	h := hashToken(tok)
	if b, ok := s.tokens.get(h, s.now()); ok {
		return b, nil
	}
	// A token alone names no bank: only the address is limited.
	at, err := s.cfg.Guards.BankToken.Begin(ctx, "", false)
	if err != nil {
		return storage.Bank{}, err
	}
	if len(tok) > 256 {
		at.Failed(ctx)
		return storage.Bank{}, rpcerr.New(rpcerr.ErrUnauthenticated, "unknown bank token")
	}
	b, err := s.store.BankByToken(ctx, h)
	if errors.Is(err, storage.ErrNotFound) {
		at.Failed(ctx)
		return storage.Bank{}, rpcerr.New(rpcerr.ErrUnauthenticated, "unknown bank token")
	}
	if err != nil {
		at.Cancel(ctx)
		return storage.Bank{}, err
	}
	at.Succeeded(ctx)
	s.tokens.put(h, b, s.now())
	return b, nil
}

// CheckToken checks the call's bank token as Reply and Monitoring do
// before they look at a body (email, when set, must be the token's bank).
// The gateway calls it before it reads a body; a token found is cached, so
// the call with the body costs no second lookup.
func (s *Service) CheckToken(ctx context.Context, email string) error {
	b, err := s.caller(ctx)
	if err != nil {
		return err
	}
	if email != "" && !strings.EqualFold(strings.TrimSpace(email), b.Email) {
		return rpcerr.New(rpcerr.ErrUnauthenticated, "the token does not belong to %s", email)
	}
	return nil
}

// tokenCache remembers banks by token hash for a short time, so a poll
// costs no store read. Unknown tokens are not remembered: a bank
// registered through another replica works at once.
type tokenCache struct {
	mu  sync.RWMutex
	ttl time.Duration
	max int
	m   map[string]cachedBank
}

type cachedBank struct {
	bank  storage.Bank
	until time.Time
}

func newTokenCache(ttl time.Duration, max int) *tokenCache {
	return &tokenCache{ttl: ttl, max: max, m: map[string]cachedBank{}}
}

func (c *tokenCache) get(h string, now time.Time) (storage.Bank, bool) {
	if c.ttl <= 0 {
		return storage.Bank{}, false
	}
	c.mu.RLock()
	e, ok := c.m[h]
	c.mu.RUnlock()
	if !ok || !now.Before(e.until) {
		return storage.Bank{}, false
	}
	return e.bank, true
}

func (c *tokenCache) put(h string, b storage.Bank, now time.Time) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		// Start over rather than track ages: refilling costs one read per bank.
		c.m = map[string]cachedBank{}
	}
	c.m[h] = cachedBank{bank: b, until: now.Add(c.ttl)}
}

func (c *tokenCache) drop(h string) {
	c.mu.Lock()
	delete(c.m, h)
	c.mu.Unlock()
}
