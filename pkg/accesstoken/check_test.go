package accesstoken

import (
	"errors"
	"testing"
	"time"
)

const testIssuer = "http://fris.test"

// valid are the claims of an access token good at now, one hour long,
// issued with nbf 30 s in the past as the auth service does.
func valid(now time.Time) Claims {
	return Claims{
		Issuer: testIssuer, Subject: "7", Audience: Audience{"c"},
		ExpiresAt: NumericDate(now.Add(time.Hour).Unix()), NotBefore: NumericDate(now.Add(-30 * time.Second).Unix()),
		IssuedAt: NumericDate(now.Unix()), ID: "j", Type: Type,
	}
}

// TestCheck makes each rule fail alone: every case changes one claim, or
// the clock, of a token that passes.
func TestCheck(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	skew := 30 * time.Second
	rules := Rules{Issuer: testIssuer, Skew: skew}
	sec := func(d time.Duration) NumericDate { return NumericDate(now.Add(d).Unix()) }
	for _, tc := range []struct {
		name  string
		edit  func(*Claims)
		at    time.Time // zero: now
		rules *Rules    // nil: rules
		want  error
	}{
		{name: "valid", edit: func(*Claims) {}},
		{name: "no exp", edit: func(c *Claims) { c.ExpiresAt = 0 }, want: ErrNoExpiry},
		{name: "expired beyond skew", edit: func(c *Claims) { c.ExpiresAt = sec(-31 * time.Second) }, want: ErrExpired},
		{name: "exp plus skew is now", edit: func(c *Claims) { c.ExpiresAt = sec(-skew) }, want: ErrExpired},
		{name: "expired within skew", edit: func(c *Claims) { c.ExpiresAt = sec(-29 * time.Second) }},
		{name: "expired, no skew", edit: func(c *Claims) { c.ExpiresAt = sec(0) }, rules: &Rules{Issuer: testIssuer}, want: ErrExpired},
		{name: "exp a second ahead, no skew", edit: func(c *Claims) { c.ExpiresAt = sec(time.Second) }, rules: &Rules{Issuer: testIssuer}},
		{name: "expires between two seconds", edit: func(*Claims) {}, at: now.Add(time.Hour + skew - time.Millisecond)},
		{name: "not yet valid", edit: func(c *Claims) { c.NotBefore = sec(31 * time.Second) }, want: ErrNotYetValid},
		{name: "nbf at the skew", edit: func(c *Claims) { c.NotBefore = sec(skew) }},
		{name: "issued in the future", edit: func(c *Claims) { c.IssuedAt = sec(time.Minute) }, want: ErrIssuedLater},
		{name: "iat within skew", edit: func(c *Claims) { c.IssuedAt = sec(skew) }},
		{name: "no iat, no nbf", edit: func(c *Claims) { c.IssuedAt, c.NotBefore = 0, 0 }},
		{name: "other issuer", edit: func(c *Claims) { c.Issuer = "http://evil.example" }, want: ErrIssuer},
		{name: "no issuer", edit: func(c *Claims) { c.Issuer = "" }, want: ErrIssuer},
		{name: "issuer unchecked", edit: func(c *Claims) { c.Issuer = "http://elsewhere" }, rules: &Rules{Skew: skew}},
		{name: "no subject", edit: func(c *Claims) { c.Subject = "" }, want: ErrNoSubject},
		{name: "id token", edit: func(c *Claims) { c.Type = "ID_TOKEN" }, want: ErrType},
		{name: "refresh token", edit: func(c *Claims) { c.Type = "REFRESH_TOKEN" }, want: ErrType},
		{name: "no type", edit: func(c *Claims) { c.Type = "" }, want: ErrType},
		{name: "type in another case", edit: func(c *Claims) { c.Type = "access_token" }, want: ErrType},
		{name: "other types asked for", edit: func(*Claims) {}, rules: &Rules{Issuer: testIssuer, Skew: skew, Types: []string{"ID_TOKEN", "REFRESH_TOKEN"}}, want: ErrType},
		{name: "one of the types asked for", edit: func(c *Claims) { c.Type = "REFRESH_TOKEN" }, rules: &Rules{Issuer: testIssuer, Skew: skew, Types: []string{Type, "REFRESH_TOKEN"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := valid(now)
			tc.edit(&c)
			at, r := now, rules
			if !tc.at.IsZero() {
				at = tc.at
			}
			if tc.rules != nil {
				r = *tc.rules
			}
			if err := c.Check(at, r); !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Fatalf("Check = %v, want %v", err, tc.want)
			}
		})
	}
}

// The zero Rules still refuse anything but an access token: a reader that
// forgets to name the types cannot take an id or refresh token for a bearer
// credential.
func TestZeroRulesTakeAccessTokensOnly(t *testing.T) {
	now := time.Now()
	c := valid(now)
	if err := c.Check(now, Rules{}); err != nil {
		t.Fatalf("access token: %v", err)
	}
	for _, typ := range []TokenType{"ID_TOKEN", "REFRESH_TOKEN", ""} {
		c.Type = typ
		if err := c.Check(now, Rules{}); !errors.Is(err, ErrType) {
			t.Fatalf("type %q: %v", typ, err)
		}
	}
}
