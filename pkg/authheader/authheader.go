// Package authheader reads the Authorization header's schemes FRIS speaks,
// one parser per scheme: Bearer (RFC 6750), Basic (RFC 7617) and the search
// broker's Samply and SamplyRegistration. The gateway reads the header a
// client sent; the services read the same value the gateway passed on as
// gRPC metadata, with the same parser, so both hops agree on what a
// credential is. Scheme names are case-insensitive (RFC 9110 11.1), and
// surrounding whitespace is ignored.
package authheader

import (
	"encoding/base64"
	"errors"
	"strings"
)

// Scheme names as FRIS writes them (challenges, docs).
const (
	SchemeBearer             = "Bearer"
	SchemeBasic              = "Basic"
	SchemeSamply             = "Samply"
	SchemeSamplyRegistration = "SamplyRegistration"
)

// split cuts h into its scheme and credentials; ok is false when h has no
// space after the scheme (a bare value).
func split(h string) (scheme, cred string, ok bool) {
	scheme, cred, ok = strings.Cut(strings.TrimSpace(h), " ")
	return scheme, strings.TrimSpace(cred), ok
}

// Bearer returns the token of "Bearer <token>", or "" when h is of another
// scheme or carries no token. Real clients send "Bearer null" (or
// "undefined") when logged out: that is no token either.
func Bearer(h string) string {
	scheme, tok, ok := split(h)
	if !ok || !strings.EqualFold(scheme, SchemeBearer) {
		return ""
	}
	if tok == "null" || tok == "undefined" {
		return ""
	}
	return tok
}

// Errors of Basic. ErrNotBasic means the header is absent or of another
// scheme, which is no error of the client's; the others are malformed
// Basic credentials.
var (
	ErrNotBasic    = errors.New("not Basic credentials")
	ErrNotBase64   = errors.New("the Basic credentials are not base64")
	ErrNoSeparator = errors.New("the Basic credentials have no ':'")
)

// Basic returns the user and password of "Basic base64(user:password)".
// The password may hold ':'; the user may be empty (whether that is
// acceptable is the caller's to say).
func Basic(h string) (user, password string, err error) {
	scheme, cred, ok := split(h)
	if !ok || !strings.EqualFold(scheme, SchemeBasic) {
		return "", "", ErrNotBasic
	}
	raw, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		return "", "", ErrNotBase64
	}
	user, password, ok = strings.Cut(string(raw), ":")
	if !ok {
		return "", "", ErrNoSeparator
	}
	return user, password, nil
}

// Samply returns a bank's token from "Samply <token>", what real
// connectors send, or from a bare "<token>" without a scheme; "" when h is
// empty or of another scheme.
func Samply(h string) string {
	scheme, tok, ok := split(h)
	if !ok {
		return scheme // a bare token (or "")
	}
	if !strings.EqualFold(scheme, SchemeSamply) {
		return ""
	}
	return tok
}

// SamplyRegistration returns the activation code of
// "SamplyRegistration <code>" (a bank's registration with the code the
// broker mailed); "" for any other value, a bare one included.
func SamplyRegistration(h string) string {
	scheme, code, ok := split(h)
	if !ok || !strings.EqualFold(scheme, SchemeSamplyRegistration) {
		return ""
	}
	return code
}
