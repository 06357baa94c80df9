// Package authn reads bearer tokens and turns them into verified identities.
package authn

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"fris.dev/pkg/identity"
)

// Verifier checks a bearer token (a JWT signed by the auth service).
type Verifier interface {
	Verify(ctx context.Context, token string) (identity.Identity, error)
}

// ErrNoVerifier is returned while no auth service is configured: every token
// is then unverifiable and callers are anonymous.
var ErrNoVerifier = errors.New("no token verifier configured")

// None verifies nothing.
type None struct{}

func (None) Verify(context.Context, string) (identity.Identity, error) {
	return identity.Identity{}, ErrNoVerifier
}

// BearerToken returns the token of an `Authorization: Bearer <token>` header,
// or "" when there is none. Real clients send `Bearer null` when logged out;
// that is no token.
func BearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	tok = strings.TrimSpace(tok)
	if tok == "" || tok == "null" || tok == "undefined" {
		return ""
	}
	return tok
}

type ctxKey struct{}

// With stores the caller's identity in ctx.
func With(ctx context.Context, id identity.Identity) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// From returns the identity stored by With; anonymous when none.
func From(ctx context.Context) identity.Identity {
	id, _ := ctx.Value(ctxKey{}).(identity.Identity)
	return id
}

// Optional verifies a bearer token when one is sent and treats a missing or
// invalid one as anonymous: the registry's rule, never an error.
func Optional(v Verifier, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok := BearerToken(r); tok != "" {
			if id, err := v.Verify(r.Context(), tok); err == nil {
				r = r.WithContext(With(r.Context(), id))
			}
		}
		next.ServeHTTP(w, r)
	})
}
