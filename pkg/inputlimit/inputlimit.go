// Package inputlimit names the size limit of every text field a client can
// send, so that each service refuses an oversized one before anything is
// stored, with a reason naming the field and its limit
// (docs/security.md, "Input limits"). The limits are bytes of the UTF-8
// text, generous for every real value: a name of 256 bytes is 64 letters
// of any script.
package inputlimit

import (
	"fris.dev/pkg/rpcerr"
)

// Limits, in bytes.
const (
	// Email: RFC 5321's bound of a forward path.
	Email = 254
	// Name is a person's, a client's or a bank's name.
	Name = 256
	// Description is a client's or a key's description, a user's contact
	// information, a locality's description.
	Description = 4096
	// URL is one redirect URL; RedirectURLs the comma-separated list.
	URL          = 2048
	RedirectURLs = 16 << 10
	// PublicKey is a base64 SPKI public key (an RSA-16384 key is ~2.8 KB).
	PublicKey = 8 << 10
	// Password and Secret are a user's password and a client's secret:
	// argon2id hashes any length, so the bound only caps the work.
	Password = 1024
	Secret   = 1024
	// ClientID, Scope and GrantType are OAuth 2.0 parameters; Code an
	// authorization or sign request code; Token a refresh or access token
	// (a JWT); Signature a base64 RSA signature (~2.7 KB for RSA-16384);
	// Param any other short OAuth parameter (state, nonce, code challenge
	// and verifier, redirect_uri is a URL).
	ClientID  = 128
	Scope     = 1024
	GrantType = 64
	Code      = 512
	Token     = 8 << 10
	Signature = 4 << 10
	Param     = 512
	// ID is an identifier that travels in a path: a namespace, URN, bank,
	// site, teiler, inquiry or reply id. Patient ids (PatientID) may be
	// longer; so may a path segment at the gateway, which is bounded by
	// the longest of them.
	ID        = 256
	PatientID = 512
	// Text is free text of an inquiry or a monitoring message.
	Text = 64 << 10
)

// Field is one value to check.
type Field struct {
	Name  string
	Value string
	Max   int
}

// F is a Field.
func F(name, value string, max int) Field { return Field{Name: name, Value: value, Max: max} }

// Check refuses the first field longer than its limit: InvalidArgument
// (rpcerr.ErrInvalid), naming the field and the limit, which the gateway
// answers with 400.
func Check(fields ...Field) error {
	for _, f := range fields {
		if len(f.Value) > f.Max {
			return rpcerr.New(rpcerr.ErrInvalid, "%s is longer than %d bytes (%d sent)", f.Name, f.Max, len(f.Value))
		}
	}
	return nil
}

// Each checks every value of a list under one name and limit.
func Each(name string, values []string, max int) error {
	for _, v := range values {
		if err := Check(F(name, v, max)); err != nil {
			return err
		}
	}
	return nil
}

// Size refuses a body of n bytes longer than max, as Check does a field.
func Size(name string, n, max int) error {
	if n > max {
		return rpcerr.New(rpcerr.ErrInvalid, "%s is longer than %d bytes (%d sent)", name, max, n)
	}
	return nil
}
