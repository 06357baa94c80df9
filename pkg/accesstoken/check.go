package accesstoken

import (
	"errors"
	"slices"
	"time"
)

// Rules are what a reader requires of a token's claims once its signature
// verified.
type Rules struct {
	// Issuer, when set, must equal iss; empty accepts any issuer (a
	// gateway configured without one).
	Issuer string
	// Skew is the clock difference tolerated on exp, nbf and iat.
	Skew time.Duration
	// Types are the `type` values accepted; none means access tokens only,
	// so that a reader cannot take an id or refresh token for a bearer
	// credential by forgetting to say.
	Types []string
}

// Reasons Check refuses a token, one per rule, so callers and tests can tell
// them apart; a caller that does not care maps them all to one.
var (
	ErrNoExpiry    = errors.New("token has no exp")
	ErrExpired     = errors.New("token expired")
	ErrNotYetValid = errors.New("token not valid yet")
	ErrIssuedLater = errors.New("token issued in the future")
	ErrIssuer      = errors.New("token from another issuer")
	ErrNoSubject   = errors.New("token names no subject")
	ErrType        = errors.New("token of another type")
)

// Check applies the rules to c at now: exp present and not past (exp +
// skew), nbf and iat not ahead (minus skew), the issuer, a subject, and the
// type. The dates are whole seconds: a token is good up to, not including,
// its exp.
func (c *Claims) Check(now time.Time, r Rules) error {
	switch {
	case c.ExpiresAt == 0:
		return ErrNoExpiry
	case !now.Before(c.Expiration().Add(r.Skew)):
		return ErrExpired
	case now.Add(r.Skew).Before(c.NotBeforeTime()):
		return ErrNotYetValid
	case now.Add(r.Skew).Before(c.IssuedAtTime()):
		return ErrIssuedLater
	case r.Issuer != "" && c.Issuer != r.Issuer:
		return ErrIssuer
	case c.Subject == "":
		return ErrNoSubject
	}
	want := r.Types
	if len(want) == 0 {
		want = []string{Type}
	}
	if !slices.Contains(want, string(c.Type)) {
		return ErrType
	}
	return nil
}
