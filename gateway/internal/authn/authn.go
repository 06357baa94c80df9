// Package authn reads bearer tokens and turns them into verified identities.
package authn

import (
	"context"
	"errors"
	"net/http"

	"fris.dev/gateway/internal/apierr"
	"fris.dev/pkg/authheader"
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

// Subject is the subject of r's bearer token when the verifier can vouch
// for it at once (JWT.Known: no key fetch, no service call); "" without
// one, with an invalid one, or with a verifier that cannot tell.
func Subject(r *http.Request, v Verifier) string {
	k, ok := v.(interface {
		Known(context.Context, string) (identity.Identity, bool)
	})
	if !ok {
		return ""
	}
	tok := BearerToken(r)
	if tok == "" {
		return ""
	}
	if id, ok := k.Known(r.Context(), tok); ok {
		return id.Subject
	}
	return ""
}

// BearerToken returns the token of the request's `Authorization: Bearer
// <token>` header, or "" when there is none (authheader.Bearer says what
// counts as one).
func BearerToken(r *http.Request) string {
	return authheader.Bearer(r.Header.Get("Authorization"))
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
// invalid one as anonymous: the registry's rule, never an error but one
// of the gateway's own: while the revocation list is out of date and the
// verifier fails closed, a token is answered 503 (Unavailable), not
// served as anonymous, which would hide why its holder sees less.
func Optional(v Verifier, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok := BearerToken(r); tok != "" {
			id, err := v.Verify(r.Context(), tok)
			switch {
			case errors.Is(err, ErrRevocationStale):
				Unavailable(w)
				return
			case err == nil:
				r = r.WithContext(With(r.Context(), id))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Unavailable answers a request whose token cannot be checked now
// (ErrRevocationStale): 503 with a Retry-After.
func Unavailable(w http.ResponseWriter) {
	w.Header().Set("Retry-After", StaleRetryAfter)
	apierr.WriteJSON(w, http.StatusServiceUnavailable, "access tokens cannot be checked now (the revocation list is out of date); try again later")
}

type forwardKey struct{}

// Forwarding returns the Authorization value Required stored for the
// service ("Bearer <token>"), or "" on every other route: only the
// bearer-protected auth routes pass the raw token on.
func Forwarding(ctx context.Context) string {
	s, _ := ctx.Value(forwardKey{}).(string)
	return s
}

// Challenge is how a route that requires a bearer token answers a request
// without a valid one (RFC 6750 3), and whether the token travels on.
type Challenge struct {
	// Status is the refusal's: 403 on group A's routes (the spec's), 401
	// on the researcher API (what JSON clients expect of an API).
	Status int
	// Realm, when not empty, is named in the WWW-Authenticate challenge.
	Realm string
	// Forward passes the token on to the service (see Forwarding), for a
	// service that reads the token itself.
	Forward bool
}

// Require lets a request through only with a bearer token the verifier
// accepts; it then carries the identity (and the token, if c says so).
// Without one it answers as c says, with a WWW-Authenticate challenge, and
// the service is not called.
func Require(v Verifier, c Challenge, next http.Handler) http.Handler {
	missing, invalid := "Bearer", "Bearer "
	if c.Realm != "" {
		missing += ` realm="` + c.Realm + `"`
		invalid += `realm="` + c.Realm + `", `
	}
	invalid += `error="invalid_token"`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := BearerToken(r)
		if tok == "" {
			w.Header().Set("WWW-Authenticate", missing)
			apierr.WriteJSON(w, c.Status, "a bearer access token is required")
			return
		}
		id, err := v.Verify(r.Context(), tok)
		if errors.Is(err, ErrRevocationStale) {
			Unavailable(w)
			return
		}
		if err != nil || id.Anonymous() {
			w.Header().Set("WWW-Authenticate", invalid)
			apierr.WriteJSON(w, c.Status, "the access token is not valid")
			return
		}
		ctx := With(r.Context(), id)
		if c.Forward {
			ctx = context.WithValue(ctx, forwardKey{}, "Bearer "+tok)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Required is Require as group A's bearer routes use it: 403 (the spec's
// status for these routes), and the token forwarded to the auth service.
func Required(v Verifier, next http.Handler) http.Handler {
	return Require(v, Challenge{Status: http.StatusForbidden, Forward: true}, next)
}

// Scope lets a request through only when the identity a previous check
// stored (Require) carries scope. Otherwise
// it answers 403 with the RFC 6750 insufficient_scope challenge naming the
// scope, so a client learns what to ask its operator for; the service is
// not called. realm, when not empty, goes into the challenge as the
// route's other challenges carry it.
func Scope(scope, realm string, next http.Handler) http.Handler {
	challenge := `Bearer `
	if realm != "" {
		challenge += `realm="` + realm + `", `
	}
	challenge += `error="insufficient_scope", scope="` + scope + `"`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !From(r.Context()).HasScope(scope) {
			w.Header().Set("WWW-Authenticate", challenge)
			apierr.WriteOAuth(w, http.StatusForbidden, "insufficient_scope",
				"the access token lacks the scope "+scope+"; an operator grants it")
			return
		}
		next.ServeHTTP(w, r)
	})
}
