// Package accesstoken is the access token as the auth service issues it and
// as the gateway and the auth service accept it: its claims and their JSON
// form, its type, its size limit, the reading of a compact JWS and the checks
// every reader makes. Both sides read through this package, so a rule
// (say, what an aud equal to the issuer means) cannot drift between them.
//
// The auth service's id and refresh tokens carry the same claims (the id
// token adds a few of its own), so it reads those through here too.
package accesstoken

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"time"
)

// Type is the `type` claim of an access token: the only token type that is
// a bearer credential.
const Type = "ACCESS_TOKEN"

// Claims are what every token of the auth service carries; the access token
// adds scope and client_id. The JSON tags are the claim names. A fixed
// struct, encoded and decoded once per token, costs a fraction of a generic
// claims map, and a struct embedding it (the auth service's id token) gets
// the same codecs.
type Claims struct {
	Issuer  string `json:"iss"`
	Subject string `json:"sub"`
	// Audience is the client; a token issued to no client (a signed code
	// sent without client_id) names the issuer itself, the deployment
	// whose APIs are all such a token opens (ClientID reads that as no
	// client). Tokens issued before that rule have no aud at all.
	Audience  Audience    `json:"aud,omitempty"`
	ExpiresAt NumericDate `json:"exp"`
	NotBefore NumericDate `json:"nbf"`
	IssuedAt  NumericDate `json:"iat"`
	ID        string      `json:"jti"`
	Type      TokenType   `json:"type"`
	Nonce     string      `json:"nonce,omitempty"`
	Scope     Scope       `json:"scope,omitempty"`
	// Client (`client_id`) is on access tokens (RFC 9068): the client they
	// were issued to, and for a client_credentials token also its subject.
	Client string `json:"client_id,omitempty"`
	// AuthorizedParty (`azp`) is never written by the auth service; other
	// OpenID issuers name the client there, and it wins over aud.
	AuthorizedParty string `json:"azp,omitempty"`
	// Session (OpenID's `sid`) is the refresh chain, carried by the
	// refresh token so that issuing one needs no write, and by the access
	// tokens issued with it so that revoking the chain (reuse, RFC 7009)
	// ends them too.
	Session string `json:"sid,omitempty"`
}

// Parse decodes a verified payload (see Verify) into Claims; any claim of
// the wrong JSON shape is an error.
func Parse(payload []byte) (*Claims, error) {
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// ClientID is the client the token was issued to: azp when set, else the
// first aud, except that an aud equal to the issuer means no client (the
// signed-code flow without client_id), as does no aud (older tokens).
func (c *Claims) ClientID() string {
	if c.AuthorizedParty != "" {
		return c.AuthorizedParty
	}
	if len(c.Audience) == 0 || c.Audience[0] == c.Issuer {
		return ""
	}
	return c.Audience[0]
}

// Expiration, NotBeforeTime, IssuedAtTime: the numeric dates as times.
func (c *Claims) Expiration() time.Time    { return c.ExpiresAt.Time() }
func (c *Claims) NotBeforeTime() time.Time { return c.NotBefore.Time() }
func (c *Claims) IssuedAtTime() time.Time  { return c.IssuedAt.Time() }

// TokenType is the `type` claim. A value that is not a JSON string reads
// as no type (refused as the wrong type, not as an undecodable token: it
// is a well-formed token of no type we issue).
type TokenType string

func (t *TokenType) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) != nil {
		s = ""
	}
	*t = TokenType(s)
	return nil
}

// Audience is `aud`: issued as an array, read as an array or one string
// (RFC 7519 4.1.3 allows both).
type Audience []string

func (a *Audience) UnmarshalJSON(b []byte) error {
	return oneOrMany(b, (*[]string)(a), func(one string) []string { return []string{one} })
}

// Scope is the access token's `scope`: written as one space-separated
// string (RFC 9068 2.2.3, RFC 8693 4.2), which the Samply auth client
// requires; read from that or from a JSON array of strings (what earlier
// tokens carried, and some other issuers write), each split on spaces.
type Scope []string

func (s Scope) MarshalJSON() ([]byte, error) { return json.Marshal(strings.Join(s, " ")) }

func (s *Scope) UnmarshalJSON(b []byte) error {
	var many []string
	if err := oneOrMany(b, &many, strings.Fields); err != nil {
		return err
	}
	if len(b) > 0 && b[0] == '[' {
		var out []string // nil for an empty array, as for no claim
		for _, one := range many {
			out = append(out, strings.Fields(one)...)
		}
		many = out
	}
	*s = many
	return nil
}

// oneOrMany reads a claim that is one string (split by one) or an array of
// strings into dst.
func oneOrMany(b []byte, dst *[]string, one func(string) []string) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*dst = one(s)
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*dst = many
	return nil
}

// NumericDate is a JWT NumericDate: seconds since the epoch, written as an
// integer, read from any JSON number in range.
type NumericDate int64

// Time is the date as a time (the epoch for 0, an absent claim).
func (d NumericDate) Time() time.Time { return time.Unix(int64(d), 0) }

func (d *NumericDate) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	if math.IsNaN(f) || f < 0 || f > math.MaxInt64/2 {
		return errors.New("numeric date out of range")
	}
	*d = NumericDate(f)
	return nil
}
