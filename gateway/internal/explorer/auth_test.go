package explorer

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"fris.dev/gateway/internal/authn"
)

func TestSignIn(t *testing.T) {
	e := newEnv(t, true)
	b := e.browser()
	planted := &http.Cookie{Name: SessionCookie, Value: randomID()}
	b.cookies[SessionCookie] = planted
	state, code := b.startSignIn("/explorer/namespaces/mdr16")
	// The sign-in in progress is the browser's: a sealed cookie of its
	// own, nothing on the server.
	flow := b.cookies[flowCookieName(state)]
	if flow == nil || !flow.HttpOnly || flow.SameSite != http.SameSiteLaxMode || flow.Path != "/explorer" || flow.Secure || flow.MaxAge != 15*60 {
		t.Fatalf("sign-in cookie %+v", flow)
	}
	for _, secret := range []string{state, "s3cret"} {
		if strings.Contains(flow.Value, secret) {
			t.Fatalf("the sign-in cookie shows %q in the clear", secret)
		}
	}
	if n := e.store.Len(); n != 0 {
		t.Fatalf("%d sessions stored before signing in", n)
	}
	rec := b.do("GET", CallbackPath+"?"+url.Values{"state": {state}, "code": {code}}.Encode(), nil)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("callback: %d %s", rec.Code, rec.Body)
	}
	after := b.cookies[SessionCookie]
	if after == nil || after.Value == planted.Value || !after.HttpOnly || after.SameSite != http.SameSiteLaxMode || after.Path != "/explorer" || after.Secure {
		t.Fatalf("session cookie after sign-in %+v (planted %q)", after, planted.Value)
	}
	if _, ok := b.cookies[flowCookieName(state)]; ok {
		t.Fatal("the sign-in cookie outlived the callback")
	}
	if n := e.store.Len(); n != 1 {
		t.Fatalf("%d sessions after signing in, want 1", n)
	}
	page := b.do("GET", "/explorer/", nil)
	body := page.Body.String()
	if page.Code != 200 || !strings.Contains(body, "Ada Lovelace") || !strings.Contains(body, `action="/explorer/logout"`) {
		t.Fatalf("home after sign-in: %d\n%s", page.Code, body)
	}
	for _, secret := range []string{"at-", "rt-", "s3cret"} {
		if strings.Contains(body, secret) || strings.Contains(page.Header().Get("Set-Cookie"), secret) {
			t.Fatalf("a token or the client secret reached the browser: %q", secret)
		}
	}
	e.mdr.mu.Lock()
	last := e.mdr.subjects[len(e.mdr.subjects)-1]
	e.mdr.mu.Unlock()
	if last != "42" {
		t.Fatalf("the registry saw subject %q, want the signed-in user's", last)
	}
}

func TestCallbackRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		query func(state, code string) url.Values
		// noCookie sends the callback from a browser that did not start.
		noCookie bool
		want     int
		wantText string
	}{
		{name: "state mismatch", query: func(_, c string) url.Values { return url.Values{"state": {"forged"}, "code": {c}} }, want: 400, wantText: "does not belong"},
		{name: "no state", query: func(_, c string) url.Values { return url.Values{"code": {c}} }, want: 400, wantText: "does not belong"},
		{name: "missing code", query: func(s, _ string) url.Values { return url.Values{"state": {s}} }, want: 400, wantText: "carries no code"},
		{name: "error from the provider", query: func(s, _ string) url.Values { return url.Values{"state": {s}, "error": {"access_denied"}} }, want: 400, wantText: "cancelled"},
		{name: "code not accepted", query: func(s, _ string) url.Values { return url.Values{"state": {s}, "code": {"stolen"}} }, want: 502, wantText: "failed"},
		{name: "another browser", query: func(s, c string) url.Values { return url.Values{"state": {s}, "code": {c}} }, noCookie: true, want: 400, wantText: "not started in this browser"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, true)
			b := e.browser()
			state, code := b.startSignIn("/explorer/")
			if tc.noCookie {
				b = e.browser()
			}
			rec := b.do("GET", CallbackPath+"?"+tc.query(state, code).Encode(), nil)
			if rec.Code != tc.want || !strings.Contains(rec.Body.String(), tc.wantText) {
				t.Fatalf("%d, want %d with %q:\n%s", rec.Code, tc.want, tc.wantText, rec.Body)
			}
			if home := b.do("GET", "/explorer/", nil).Body.String(); strings.Contains(home, "Ada Lovelace") {
				t.Fatal("signed in after all")
			}
		})
	}
	t.Run("replay", func(t *testing.T) {
		e := newEnv(t, true)
		b := e.browser()
		state, code := b.startSignIn("/explorer/")
		kept := b.cookies[flowCookieName(state)]
		cb := CallbackPath + "?" + url.Values{"state": {state}, "code": {code}}.Encode()
		// The first try fails at the exchange (the provider is down, say):
		// the state is spent all the same.
		e.idp.mu.Lock()
		saved := e.idp.challenges[code]
		delete(e.idp.challenges, code)
		e.idp.mu.Unlock()
		if rec := b.do("GET", cb, nil); rec.Code != 502 {
			t.Fatalf("first callback %d", rec.Code)
		}
		e.idp.mu.Lock()
		e.idp.challenges[code] = saved
		e.idp.mu.Unlock()
		// The browser dropped the cookie with the first answer.
		if rec := b.do("GET", cb, nil); rec.Code != 400 || !strings.Contains(rec.Body.String(), "not started in this browser") {
			t.Fatalf("callback again: %d\n%s", rec.Code, rec.Body)
		}
		// Sent again with the cookie kept aside: refused all the same.
		b.cookies[flowCookieName(state)] = kept
		if rec := b.do("GET", cb, nil); rec.Code != 400 || !strings.Contains(rec.Body.String(), "used already") {
			t.Fatalf("replayed callback: %d\n%s", rec.Code, rec.Body)
		}
		// A good sign-in, replayed after success, finds no flow either.
		state, code = b.startSignIn("/explorer/")
		kept = b.cookies[flowCookieName(state)]
		cb = CallbackPath + "?" + url.Values{"state": {state}, "code": {code}}.Encode()
		if rec := b.do("GET", cb, nil); rec.Code != 303 {
			t.Fatalf("callback %d", rec.Code)
		}
		b.cookies[flowCookieName(state)] = kept
		if rec := b.do("GET", cb, nil); rec.Code != 400 || !strings.Contains(rec.Body.String(), "used already") {
			t.Fatalf("replay after success: %d", rec.Code)
		}
	})
	t.Run("two tabs", func(t *testing.T) {
		e := newEnv(t, true)
		b := e.browser()
		s1, _ := b.startSignIn("/explorer/")
		s2, c2 := b.startSignIn("/explorer/namespaces/mdr16")
		if s1 == s2 {
			t.Fatal("two sign-ins share a state")
		}
		if rec := b.do("GET", CallbackPath+"?"+url.Values{"state": {s2}, "code": {c2}}.Encode(), nil); rec.Code != 303 || rec.Header().Get("Location") != "/explorer/namespaces/mdr16" {
			t.Fatalf("second tab's callback %d %q", rec.Code, rec.Header().Get("Location"))
		}
	})
}

func TestLogout(t *testing.T) {
	e := newEnv(t, true)
	b := e.browser()
	b.signIn()
	sess, err := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	if err != nil {
		t.Fatal(err)
	}
	if rec := b.do("POST", LogoutPath, url.Values{CSRFField: {"wrong"}}); rec.Code != 403 {
		t.Fatalf("logout with a wrong token: %d", rec.Code)
	}
	if rec := b.do("POST", LogoutPath, url.Values{CSRFField: {sess.CSRF}}, "Origin", "https://evil.example"); rec.Code != 403 {
		t.Fatalf("logout from another origin: %d", rec.Code)
	}
	if rec := b.do("POST", LogoutPath, url.Values{CSRFField: {sess.CSRF}}, "Sec-Fetch-Site", "cross-site"); rec.Code != 403 {
		t.Fatalf("logout from another site: %d", rec.Code)
	}
	rec := b.do("POST", LogoutPath, url.Values{CSRFField: {sess.CSRF}}, "Origin", "http://gw.test", "Sec-Fetch-Site", "same-origin")
	if rec.Code != 303 {
		t.Fatalf("logout: %d %s", rec.Code, rec.Body)
	}
	if _, ok := b.cookies[SessionCookie]; ok {
		t.Fatal("the session cookie was not cleared")
	}
	if _, err := e.store.Get(context.Background(), sess.ID); err == nil {
		t.Fatal("the session outlived the logout")
	}
	e.idp.mu.Lock()
	revoked := strings.Join(e.idp.revoked, ",")
	e.idp.mu.Unlock()
	if !strings.Contains(revoked, sess.Token.RefreshToken) {
		t.Fatalf("revoked %q, want the refresh token %q", revoked, sess.Token.RefreshToken)
	}
}

func TestRefresh(t *testing.T) {
	e := newEnv(t, true)
	b := e.browser()
	b.signIn()
	id := b.cookies[SessionCookie].Value
	s0, _ := e.store.Get(context.Background(), id)

	// Four minutes on, the token has a minute left: refreshed, once, by
	// whichever of several requests comes first.
	e.clock.t = e.clock.t.Add(4*time.Minute + time.Second)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			r := httptest.NewRequest("GET", "http://gw.test/explorer/", nil)
			r.AddCookie(&http.Cookie{Name: SessionCookie, Value: id})
			rec := httptest.NewRecorder()
			e.h.ServeHTTP(rec, r)
			if !strings.Contains(rec.Body.String(), "Ada Lovelace") {
				t.Error("signed out during the refresh")
			}
		})
	}
	wg.Wait()
	s1, _ := e.store.Get(context.Background(), id)
	e.idp.mu.Lock()
	n := e.idp.refreshes
	e.idp.mu.Unlock()
	if n != 1 || s1.Token.AccessToken == s0.Token.AccessToken {
		t.Fatalf("%d refreshes, token %q -> %q", n, s0.Token.AccessToken, s1.Token.AccessToken)
	}

	// A revoked access token signs the session out.
	e.v.mu.Lock()
	e.v.refused[s1.Token.AccessToken] = true
	e.v.mu.Unlock()
	if body := b.do("GET", "/explorer/", nil).Body.String(); strings.Contains(body, "Ada Lovelace") || !strings.Contains(body, "Sign in") {
		t.Fatal("still signed in with a revoked token")
	}

	// A failed refresh signs out too.
	b2 := e.browser()
	b2.signIn()
	s, _ := e.store.Get(context.Background(), b2.cookies[SessionCookie].Value)
	s.Token.RefreshToken = "garbage"
	_ = e.store.Put(context.Background(), s)
	e.clock.t = e.clock.t.Add(time.Hour)
	if body := b2.do("GET", "/explorer/", nil).Body.String(); strings.Contains(body, "Ada Lovelace") {
		t.Fatal("still signed in after a failed refresh")
	}
}

// TestStaleSessionUnavailable: while the gateway cannot check tokens (an
// out-of-date revocation list under -revocation-fail-closed), a signed-in
// page answers 503 with Retry-After and the session is kept, not signed
// out; once tokens are checked again it is signed in as before.
func TestStaleSessionUnavailable(t *testing.T) {
	e := newEnv(t, true)
	b := e.browser()
	b.signIn()
	id := b.cookies[SessionCookie].Value
	e.v.mu.Lock()
	e.v.stale = true
	e.v.mu.Unlock()
	rec := b.do("GET", "/explorer/", nil)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != authn.StaleRetryAfter || strings.Contains(rec.Body.String(), "Ada Lovelace") {
		t.Fatalf("stale: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	if s, err := e.store.Get(context.Background(), id); err != nil || s.User == nil {
		t.Fatalf("the session was signed out: %v", err)
	}
	e.v.mu.Lock()
	e.v.stale = false
	e.v.mu.Unlock()
	if body := b.do("GET", "/explorer/", nil).Body.String(); !strings.Contains(body, "Ada Lovelace") {
		t.Fatal("not signed in once tokens are checked again")
	}
}

func TestCleanReturn(t *testing.T) {
	for in, want := range map[string]string{
		"":                                 "/explorer/",
		"/explorer/namespaces/mdr16?q=x":   "/explorer/namespaces/mdr16?q=x",
		"/explorer/groups/urn:a:b#frag":    "/explorer/groups/urn:a:b",
		"https://evil.example/explorer/":   "/explorer/",
		"//evil.example/explorer/":         "/explorer/",
		"/explorer/../oauth2/token":        "/explorer/",
		"/explorer\\@evil":                 "/explorer/",
		"/v3/api/mdr/namespaces":           "/explorer/",
		"/explorer/login?return=//evil":    "/explorer/",
		"javascript:alert(1)//explorer/":   "/explorer/",
		"/explorer/%2e%2e/oauth2/register": "/explorer/",
		"/explorer%2f":                     "/explorer/",
		"/explorer%2Fnamespaces":           "/explorer/",
	} {
		if got := cleanReturn(in); got != want {
			t.Errorf("cleanReturn(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzCleanReturn: whatever the return parameter, the browser is sent to
// a path of the Explorer on this origin.
func FuzzCleanReturn(f *testing.F) {
	for _, s := range []string{"/explorer/x", "//evil", "/explorer/..%2f", "http://x/explorer/", "/explorer/\t/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := cleanReturn(s)
		u, err := url.Parse(got)
		if err != nil || u.IsAbs() || u.Host != "" || !strings.HasPrefix(got, Home) || !strings.HasPrefix(u.Path, Home) || strings.HasPrefix(got, "//") || strings.Contains(u.Path, "..") {
			t.Fatalf("cleanReturn(%q) = %q", s, got)
		}
	})
}

// With -auth-answers spec the token answer has no expires_in and userinfo
// no sub: the Explorer dates the token by its own exp (else every request
// would refresh) and takes the subject from the verified token.
func TestSignInSpecShape(t *testing.T) {
	e := newEnv(t, true)
	e.idp.mu.Lock()
	e.idp.spec, e.idp.exp = true, e.clock.t.Add(5*time.Minute).Unix()
	e.idp.mu.Unlock()
	b := e.browser()
	b.signIn()
	s, err := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	if err != nil {
		t.Fatal(err)
	}
	if s.User.Subject != "42" || s.User.Name != "Ada Lovelace" || s.Token.Expiry.Unix() != e.clock.t.Add(5*time.Minute).Unix() {
		t.Fatalf("session user %+v, token expiry %v", s.User, s.Token.Expiry)
	}
	refreshes := func() int {
		e.idp.mu.Lock()
		defer e.idp.mu.Unlock()
		return e.idp.refreshes
	}
	for range 3 {
		if body := b.do("GET", "/explorer/", nil).Body.String(); !strings.Contains(body, "Ada Lovelace") {
			t.Fatal("signed out")
		}
	}
	if n := refreshes(); n != 0 {
		t.Fatalf("%d refreshes of a token with minutes left", n)
	}
	// Near its exp it is refreshed, once.
	e.idp.mu.Lock()
	e.idp.exp = e.clock.t.Add(time.Hour).Unix()
	e.idp.mu.Unlock()
	e.clock.t = e.clock.t.Add(4*time.Minute + time.Second)
	for range 2 {
		if body := b.do("GET", "/explorer/", nil).Body.String(); !strings.Contains(body, "Ada Lovelace") {
			t.Fatal("signed out at the refresh")
		}
	}
	if n := refreshes(); n != 1 {
		t.Fatalf("%d refreshes near the token's exp, want 1", n)
	}
}

// TestSignedIn: the gateway's per-subject budgets find a signed-in
// session's subject from its cookie alone; no cookie, a made-up one or a
// signed-out session give "".
func TestSignedIn(t *testing.T) {
	e := newEnv(t, true)
	b := e.browser()
	b.signIn()
	id := b.cookies[SessionCookie].Value
	s, err := e.store.Get(context.Background(), id)
	if err != nil || s.User == nil || s.User.Subject == "" {
		t.Fatalf("session %+v, %v", s, err)
	}
	req := func(cookie string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "http://gw.test/explorer/", nil)
		if cookie != "" {
			r.AddCookie(&http.Cookie{Name: SessionCookie, Value: cookie})
		}
		return r
	}
	if got := e.app.SignedIn(req(id)); got != s.User.Subject {
		t.Errorf("signed in: %q, want %q", got, s.User.Subject)
	}
	if e.app.SignedIn(req("")) != "" || e.app.SignedIn(req(randomID())) != "" || e.app.SignedIn(req("not an id")) != "" {
		t.Error("a subject without a session")
	}
	_ = e.store.Delete(context.Background(), id)
	if got := e.app.SignedIn(req(id)); got != "" {
		t.Errorf("signed out: %q", got)
	}
}
