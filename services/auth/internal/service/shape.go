package service

import authv1 "fris.dev/proto/auth/v1"

// shape is how a token request came, which decides what its response
// carries (docs/decisions.md, "What a token response carries").
type shape int

const (
	// shapeOAuth: a grant_type, as RFC 6749 requires and every OAuth 2.0
	// library sends. The refresh token is signed with the refresh key's
	// MAC (HS256), which only the provider reads, and a refresh's response carries no
	// id token (OpenID Connect Core 12.2 makes it optional; the libraries
	// keep the one they have).
	shapeOAuth shape = iota
	// shapeSpec: no grant_type, as the spec's clients send (the Samply
	// auth client): they verify all three tokens of every response, the
	// refresh token too, with the one RSA key they are configured with,
	// and refresh responses carry an id token.
	shapeSpec
)

func shapeOf(r *authv1.TokenRequest) shape {
	if r.GetGrantType() == "" {
		return shapeSpec
	}
	return shapeOAuth
}
