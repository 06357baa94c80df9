package explorer

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"fris.dev/pkg/identity"
)

// wantAccess is every Explorer route with what it asks of its visitor. A
// new route fails TestRouteAccess until it is listed here, with its
// access chosen on purpose.
var wantAccess = map[string]access{
	"GET /{$}":                                         public,
	"GET /explorer":                                    public,
	"GET /explorer/{$}":                                public,
	"GET /explorer/":                                   public,
	"GET /explorer/static/":                            public,
	"GET /explorer/login":                              public,
	"GET /explorer/callback":                           public,
	"POST /explorer/logout":                            public,
	"GET /explorer/namespaces/{namespace}":             public,
	"GET /explorer/namespaces/{namespace}/search":      public,
	"GET /explorer/groups/{urn}":                       public,
	"GET /explorer/records/{urn}":                      public,
	"GET /explorer/dataelements/{urn}":                 public,
	"GET /explorer/operator/{$}":                       userAdmin,
	"GET /explorer/operator/banks":                     operator,
	"POST /explorer/operator/banks/approve":            operator,
	"POST /explorer/operator/banks/link":               operator,
	"POST /explorer/operator/banks/delete":             operator,
	"GET /explorer/operator/sites":                     operator,
	"GET /explorer/operator/site-registry":             operator,
	"POST /explorer/operator/site-registry/create":     operator,
	"POST /explorer/operator/site-registry/update":     operator,
	"GET /explorer/operator/monitoring":                operator,
	"GET /explorer/operator/registry":                  operator,
	"GET /explorer/operator/users":                     userAdmin,
	"POST /explorer/operator/users/create":             userAdmin,
	"POST /explorer/operator/users/disable":            userAdmin,
	"POST /explorer/operator/users/enable":             userAdmin,
	"POST /explorer/operator/users/scopes":             userAdmin,
	"POST /explorer/operator/users/end-sessions":       userAdmin,
	"POST /explorer/operator/users/send-reset":         userAdmin,
	"POST /explorer/operator/users/required-actions":   userAdmin,
	"POST /explorer/operator/users/temporary-password": userAdmin,
	"GET /explorer/operator/users/sign-ins":            userAdmin,
	"GET /explorer/operator/users/user":                userAdmin,
	"GET /explorer/operator/users/credentials":         userAdmin,
	"POST /explorer/operator/users/credentials/remove": userAdmin,
	"GET /explorer/operator/audit":                     operator,
	"GET /explorer/operator/settings":                  operator,
	"GET /explorer/inquiries":                          researcher,
	"GET /explorer/inquiries/new":                      researcher,
	"POST /explorer/inquiries":                         researcher,
	"GET /explorer/inquiries/{id}":                     researcher,
	"POST /explorer/inquiries/{id}":                    researcher,
	"GET /explorer/inquiries/{id}/edit":                researcher,
	"POST /explorer/inquiries/{id}/release":            researcher,
	"POST /explorer/inquiries/{id}/close":              researcher,
	"GET /explorer/inquiries/{id}/expose":              researcher,
	"GET /explorer/inquiries/{id}/events":              researcher,
	"GET /explorer/inquiries/{id}/replies.csv":         researcher,
	"GET /explorer/query/elements":                     public,
	"GET /explorer/query/condition":                    public,
	"GET /explorer/query/catalogue":                    public,
	"GET /explorer/query/catalogue/add":                public,
	"GET /explorer/query/catalogue/element":            public,
	"GET /explorer/query/group":                        public,
	"GET /explorer/query/preview":                      public,
	"GET /explorer/account":                            signedIn,
	"POST /explorer/account/password":                  signedIn,
	"POST /explorer/account/signout-everywhere":        signedIn,
	"POST /explorer/account/passkeys/begin":            signedIn,
	"POST /explorer/account/passkeys":                  signedIn,
	"POST /explorer/account/passkeys/remove":           signedIn,
	"POST /explorer/account/credentials/remove":        signedIn,
	"POST /explorer/account/totp/begin":                signedIn,
	"POST /explorer/account/totp/finish":               signedIn,
}

func TestRouteAccess(t *testing.T) {
	e := newEnv(t, true)
	seen := map[string]bool{}
	for _, rt := range e.app.routes() {
		if seen[rt.pattern] {
			t.Errorf("%s: registered twice", rt.pattern)
		}
		seen[rt.pattern] = true
		want, listed := wantAccess[rt.pattern]
		switch {
		case !listed:
			t.Errorf("%s (%v): not in wantAccess", rt.pattern, rt.access)
		case rt.access != want:
			t.Errorf("%s: access %v, want %v", rt.pattern, rt.access, want)
		}
	}
	for p := range wantAccess {
		if !seen[p] {
			t.Errorf("%s: listed but not registered", p)
		}
	}
}

// TestRegisterRefusesUndeclared: a route without its access, or a plain
// handler (which reads no session) declared anything but public, does not
// register.
func TestRegisterRefusesUndeclared(t *testing.T) {
	e := newEnv(t, true)
	page := func(*req) error { return nil }
	for _, rt := range []route{
		{pattern: "GET /explorer/new", page: page},
		{pattern: "GET /explorer/new", access: access(99), page: page},
		{pattern: "GET /explorer/new", access: signedIn, handler: http.NotFoundHandler()},
		{pattern: "GET /explorer/new", access: public},
		{pattern: "GET /explorer/new", access: public, page: page, handler: http.NotFoundHandler()},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%+v registered", rt)
				}
			}()
			e.app.handler(rt)
		}()
	}
}

// TestGates: with every page that asks more than public replaced by one
// that only notes it ran, a visitor reaches what their access allows and
// nothing more, whatever the page itself checks.
func TestGates(t *testing.T) {
	e, _ := newOperatorEnv(t)
	v := &tokenScopes{fakeVerifier: fakeVerifier{refused: map[string]bool{}}, of: map[string][]string{}}
	e.app.cfg.Verifier = v
	anon, plain, res, op := e.browser(), e.browser(), e.browser(), e.browser()
	v.def = []string{"openid", identity.ScopeResearcher, identity.ScopeOperator}
	op.signIn()
	v.of[op.token(t)] = v.def
	v.def = []string{"openid"}
	plain.signIn()
	v.of[plain.token(t)] = v.def
	v.def = []string{"openid", identity.ScopeResearcher}
	res.signIn()

	ran := map[string]bool{}
	mux := http.NewServeMux()
	for _, rt := range e.app.routes() {
		if rt.access != public {
			rt.page = func(q *req) error {
				ran[rt.pattern] = true
				q.w.WriteHeader(http.StatusNoContent)
				return nil
			}
		}
		mux.Handle(rt.pattern, e.app.handler(rt))
	}
	e.h = mux
	for _, rt := range e.app.routes() {
		if rt.access == public {
			continue
		}
		method, target, _ := strings.Cut(rt.pattern, " ")
		target = strings.NewReplacer("{id}", "i1", "{$}", "").Replace(target)
		for _, c := range []struct {
			who   string
			b     *browser
			allow bool
		}{
			{"anonymous", anon, false},
			{"signed in", plain, rt.access == signedIn},
			{"researcher", res, rt.access == signedIn || rt.access == researcher},
			{"operator", op, true},
		} {
			clear(ran)
			rec := c.b.do(method, target, nil)
			if ran[rt.pattern] != c.allow {
				t.Errorf("%s %s: ran %v, want %v (%d)", c.who, rt.pattern, ran[rt.pattern], c.allow, rec.Code)
			}
			if !c.allow && (rec.Code < 300 || rec.Code >= 500) {
				t.Errorf("%s %s: %d, want a redirect to sign in or a refusal", c.who, rt.pattern, rec.Code)
			}
		}
	}
}

// tokenScopes is fakeVerifier with scopes by token: of, or def for any other.
type tokenScopes struct {
	fakeVerifier
	def []string
	of  map[string][]string
}

func (v *tokenScopes) Verify(ctx context.Context, tok string) (identity.Identity, error) {
	id, err := v.fakeVerifier.Verify(ctx, tok)
	if err == nil {
		id.Scopes = v.def
		if s, ok := v.of[tok]; ok {
			id.Scopes = s
		}
	}
	return id, err
}

// token is the access token of b's session.
func (b *browser) token(t *testing.T) string {
	t.Helper()
	s, err := b.e.store.Get(t.Context(), b.cookies[SessionCookie].Value)
	if err != nil {
		t.Fatal(err)
	}
	return s.Token.AccessToken
}
