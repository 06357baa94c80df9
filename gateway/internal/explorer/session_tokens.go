package explorer

import (
	"context"
	"errors"
	"hash/fnv"
	"net/http"

	"golang.org/x/oauth2"

	"fris.dev/gateway/internal/authn"
	"fris.dev/pkg/identity"
)

// The session's tokens: loaded, checked and refreshed per request.

// session loads the request's session and makes sure its tokens are
// usable: refreshed when they expire soon, dropped when they are refused
// (revoked, or the refresh failed). It returns the identity the services
// are to see; nil and anonymous when not signed in. The third result is
// true when the session's token cannot be checked now (the gateway fails
// closed on an out-of-date revocation list): the session stays, and the
// page is not served.
func (a *App) session(r *http.Request) (*Session, identity.Identity, bool) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || !wellFormedID(c.Value) {
		return nil, identity.Identity{}, false
	}
	s, err := a.cfg.Store.Get(r.Context(), c.Value)
	if err != nil {
		if !errors.Is(err, ErrNoSession) {
			a.cfg.Log.WarnContext(r.Context(), "explorer: session store", "err", err)
		}
		return nil, identity.Identity{}, false
	}
	if s.User == nil || s.Token == nil {
		// Not written any more; a store may still hold one.
		return nil, identity.Identity{}, false
	}
	if s.Token.Expiry.IsZero() || a.cfg.Now().Add(a.cfg.RefreshMargin).After(s.Token.Expiry) {
		s = a.refresh(r, s)
		if s.User == nil {
			return nil, identity.Identity{}, false
		}
	}
	id, err := a.cfg.Verifier.Verify(r.Context(), s.Token.AccessToken)
	if errors.Is(err, authn.ErrRevocationStale) {
		return nil, identity.Identity{}, true
	}
	if err != nil || id.Anonymous() {
		// Revoked, or the user was cut off: the session is signed out.
		a.signOut(r.Context(), s)
		return nil, identity.Identity{}, false
	}
	return s, id, false
}

// SignedIn is the subject of r's session, looked up in the session store
// alone (in memory: no token check, no refresh, no service call), for the
// gateway's per-subject budgets, which run before any route; "" without a
// signed-in session. A session whose token was revoked counts until its
// next page signs it out.
func (a *App) SignedIn(r *http.Request) string {
	c, err := r.Cookie(SessionCookie)
	if err != nil || !wellFormedID(c.Value) {
		return ""
	}
	s, err := a.cfg.Store.Get(r.Context(), c.Value)
	if err != nil || s.User == nil || s.Token == nil {
		return ""
	}
	return s.User.Subject
}

// refresh gets new tokens with the refresh token, once per session at a
// time: a request that waited finds the tokens another one got.
func (a *App) refresh(r *http.Request, s *Session) *Session {
	mu := &a.refreshing[stripe(s.ID)]
	mu.Lock()
	defer mu.Unlock()
	cur, err := a.cfg.Store.Get(r.Context(), s.ID)
	if err != nil {
		s.User, s.Token = nil, nil
		return s
	}
	if cur.Token != nil && !a.cfg.Now().Add(a.cfg.RefreshMargin).After(cur.Token.Expiry) {
		return cur // refreshed meanwhile
	}
	if !a.Configured() || cur.Token == nil || cur.Token.RefreshToken == "" {
		a.signOut(r.Context(), cur)
		return cur
	}
	// Only the refresh token: the library then asks for new tokens.
	ts := a.oauth("").TokenSource(a.loopbackContext(r.Context()), &oauth2.Token{RefreshToken: cur.Token.RefreshToken})
	tok, err := ts.Token()
	if err != nil {
		a.cfg.Log.InfoContext(r.Context(), "explorer: token refresh failed; session signed out", "err", err)
		a.signOut(r.Context(), cur)
		return cur
	}
	cur.Token = a.stamp(tok)
	if err := a.cfg.Store.Put(r.Context(), cur); err != nil {
		a.cfg.Log.WarnContext(r.Context(), "explorer: session store", "err", err)
	}
	return cur
}

// signOut forgets the session: only signed-in sessions are kept.
func (a *App) signOut(ctx context.Context, s *Session) {
	s.User, s.Token = nil, nil
	if err := a.cfg.Store.Delete(ctx, s.ID); err != nil {
		a.cfg.Log.WarnContext(ctx, "explorer: session store", "err", err)
	}
}

func stripe(id string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return int(h.Sum32() % 64)
}
