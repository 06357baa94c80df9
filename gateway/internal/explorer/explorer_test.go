package explorer

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/identity"
	mdrv1 "fris.dev/proto/mdr/v1"
)

// fakeIdP is the identity provider's three routes the Explorer calls:
// token (code with PKCE, refresh), userinfo and revoke.
type fakeIdP struct {
	mu         sync.Mutex
	challenges map[string]string // code -> challenge
	refreshes  int
	revoked    []string
	expiresIn  int
	serial     int
}

func newIdP() *fakeIdP { return &fakeIdP{challenges: map[string]string{}, expiresIn: 300} }

// issue is what the login page would do: a code for a challenge.
func (f *fakeIdP) issue(challenge string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.serial++
	code := fmt.Sprint("code-", f.serial)
	f.challenges[code] = challenge
	return code
}

func (f *fakeIdP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	user, pass, ok := r.BasicAuth()
	switch r.Method + " " + r.URL.Path {
	case "POST /oauth2/token":
		_ = r.ParseForm()
		if !ok || user != "explorer" || pass != "s3cret-s3cret-s3cret" {
			http.Error(w, `{"error":"invalid_client"}`, 401)
			return
		}
		switch r.PostForm.Get("grant_type") {
		case "authorization_code":
			ch, known := f.challenges[r.PostForm.Get("code")]
			delete(f.challenges, r.PostForm.Get("code"))
			sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
			if !known || base64.RawURLEncoding.EncodeToString(sum[:]) != ch || !strings.HasSuffix(r.PostForm.Get("redirect_uri"), "/explorer/callback") {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(400)
				_, _ = io.WriteString(w, `{"error":"invalid_grant"}`)
				return
			}
		case "refresh_token":
			if !strings.HasPrefix(r.PostForm.Get("refresh_token"), "rt-") {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(400)
				_, _ = io.WriteString(w, `{"error":"invalid_grant"}`)
				return
			}
			f.refreshes++
		default:
			http.Error(w, "grant", 400)
			return
		}
		f.serial++
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprint("at-", f.serial), "refresh_token": fmt.Sprint("rt-", f.serial),
			"token_type": "Bearer", "expires_in": f.expiresIn})
	case "GET /oauth2/userinfo":
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer at-") {
			http.Error(w, "no", 403)
			return
		}
		_, _ = io.WriteString(w, `{"sub":"42","name":"Ada Lovelace","email":"ada@example.org"}`)
	case "POST /oauth2/revoke":
		_ = r.ParseForm()
		if !ok || user != "explorer" {
			http.Error(w, "no", 401)
			return
		}
		f.revoked = append(f.revoked, r.PostForm.Get("token"))
		_, _ = io.WriteString(w, "{}")
	default:
		http.NotFound(w, r)
	}
}

// fakeVerifier accepts the fake IdP's access tokens unless revoked.
type fakeVerifier struct {
	mu      sync.Mutex
	refused map[string]bool
}

func (v *fakeVerifier) Verify(_ context.Context, tok string) (identity.Identity, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !strings.HasPrefix(tok, "at-") || v.refused[tok] {
		return identity.Identity{}, errors.New("refused")
	}
	return identity.Identity{Subject: "42", Scopes: []string{"mdr:secret"}}, nil
}

// fakeMDR answers from a tiny registry and records the metadata it saw.
type fakeMDR struct {
	mdrv1.MdrServiceClient
	mu       sync.Mutex
	subjects []string
	langs    []string
}

func (f *fakeMDR) saw(ctx context.Context) {
	md, _ := metadata.FromOutgoingContext(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.subjects = append(f.subjects, strings.Join(md.Get(identity.KeySubject), ","))
	f.langs = append(f.langs, strings.Join(md.Get("accept-language"), ","))
}

func ds(en, de string) []*mdrv1.Designation {
	return []*mdrv1.Designation{{Lang: "de", Designation: de, Definition: de + " (Definition)"}, {Lang: "en", Designation: en, Definition: en + " (definition)"}}
}

func (f *fakeMDR) ListNamespaces(ctx context.Context, _ *mdrv1.ListNamespacesRequest, _ ...grpc.CallOption) (*mdrv1.ListNamespacesResponse, error) {
	f.saw(ctx)
	return &mdrv1.ListNamespacesResponse{Namespaces: []*mdrv1.Namespace{{Name: "mdr16", Designations: ds("Search data set", "Suchdatensatz")}}}, nil
}

func (f *fakeMDR) ListNamespaceMembers(ctx context.Context, r *mdrv1.NamespaceMembersRequest, _ ...grpc.CallOption) (*mdrv1.MemberList, error) {
	f.saw(ctx)
	if r.GetNamespace() != "mdr16" {
		return nil, status.Error(codes.NotFound, "namespace not found")
	}
	return &mdrv1.MemberList{Totalcount: 1, Results: []*mdrv1.Member{{Id: "urn:mdr16:dataelementgroup:1:1", Type: "DATAELEMENTGROUP", Designations: ds("Biobank", "Biobank")}}}, nil
}

func (f *fakeMDR) SearchNamespace(ctx context.Context, r *mdrv1.SearchRequest, _ ...grpc.CallOption) (*mdrv1.MemberList, error) {
	f.saw(ctx)
	if !strings.Contains("age alter", strings.ToLower(r.GetQuery())) {
		return &mdrv1.MemberList{}, nil
	}
	return &mdrv1.MemberList{Totalcount: 1, Results: []*mdrv1.Member{{Id: "urn:mdr16:dataelement:23:1", Type: "DATAELEMENT", Designations: ds("Age at diagnosis", "Alter bei Diagnose")}}}, nil
}

func (f *fakeMDR) GetDataElement(ctx context.Context, r *mdrv1.UrnRequest, _ ...grpc.CallOption) (*mdrv1.DataElement, error) {
	f.saw(ctx)
	if r.GetUrn() != "urn:mdr16:dataelement:15:1" {
		return nil, status.Error(codes.NotFound, "not found")
	}
	return &mdrv1.DataElement{
		Designations:   ds("Sample type tissue", "Materialart Gewebe"),
		Identification: &mdrv1.Identification{Urn: r.GetUrn()},
		Validation: &mdrv1.Validation{Datatype: "enumerated", ValueDomainType: "ENUMERATED", PermissibleValues: []*mdrv1.PermissibleValue{
			{Value: "tissue_frozen", Meanings: ds("Tissue snap frozen", "Gewebe schockgefroren")}}},
		Slots: []*mdrv1.Slot{{SlotName: "Quellsystem_Typ", SlotValue: "KIS"}},
	}, nil
}

func (f *fakeMDR) GetDataElementGroupLabels(ctx context.Context, r *mdrv1.UrnRequest, _ ...grpc.CallOption) (*mdrv1.Labels, error) {
	f.saw(ctx)
	return &mdrv1.Labels{Designations: ds("Biobank", "Biobank")}, nil
}

func (f *fakeMDR) GetDataElementGroupMembers(ctx context.Context, r *mdrv1.MembersRequest, _ ...grpc.CallOption) (*mdrv1.MemberList, error) {
	f.saw(ctx)
	return &mdrv1.MemberList{Totalcount: 1, Results: []*mdrv1.Member{{Id: "urn:mdr16:dataelement:15:1", Type: "DATAELEMENT", Designations: ds("Sample type tissue", "Materialart Gewebe")}}}, nil
}

type env struct {
	t     *testing.T
	app   *App
	h     http.Handler
	idp   *fakeIdP
	v     *fakeVerifier
	mdr   *fakeMDR
	clock *clock
	store *Memory
}

func newEnv(t *testing.T, configured bool) *env {
	t.Helper()
	e := &env{t: t, idp: newIdP(), v: &fakeVerifier{refused: map[string]bool{}}, mdr: &fakeMDR{}, clock: &clock{time.Unix(1_700_000_000, 0)}}
	e.store = NewMemory(100, e.clock.now)
	cfg := Config{MDR: e.mdr, Verifier: e.v, Loopback: e.idp, Store: e.store, Now: e.clock.now}
	if configured {
		cfg.ClientID, cfg.ClientSecret = "explorer", "s3cret-s3cret-s3cret"
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Register(mux)
	e.app, e.h = a, mux
	return e
}

// browser is a cookie jar for one test browser.
type browser struct {
	e       *env
	cookies map[string]*http.Cookie
}

func (e *env) browser() *browser { return &browser{e: e, cookies: map[string]*http.Cookie{}} }

func (b *browser) do(method, target string, form url.Values, hdr ...string) *httptest.ResponseRecorder {
	b.e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r := httptest.NewRequest(method, "http://gw.test"+target, body)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	for _, c := range b.cookies {
		r.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	b.e.h.ServeHTTP(rec, r)
	for _, c := range rec.Result().Cookies() {
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c
		}
	}
	return rec
}

// startSignIn follows /explorer/login and returns the authorize request's
// state and a code the fake identity provider issued for its challenge.
func (b *browser) startSignIn(ret string) (state, code string) {
	b.e.t.Helper()
	rec := b.do("GET", LoginPath+"?return="+url.QueryEscape(ret), nil)
	if rec.Code != http.StatusFound {
		b.e.t.Fatalf("login: %d %s", rec.Code, rec.Body)
	}
	loc, err := url.Parse(rec.Header().Get("Location"))
	if err != nil || loc.Path != "/oauth2/authorize" {
		b.e.t.Fatalf("login redirects to %q", rec.Header().Get("Location"))
	}
	q := loc.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("client_id") != "explorer" || q.Get("redirect_uri") != "http://gw.test/explorer/callback" || q.Get("response_type") != "code" {
		b.e.t.Fatalf("authorize request %v", q)
	}
	return q.Get("state"), b.e.idp.issue(q.Get("code_challenge"))
}

func (b *browser) signIn() {
	b.e.t.Helper()
	state, code := b.startSignIn("/explorer/namespaces/mdr16")
	rec := b.do("GET", CallbackPath+"?"+url.Values{"state": {state}, "code": {code}}.Encode(), nil)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/explorer/namespaces/mdr16" {
		b.e.t.Fatalf("callback: %d %q %s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
}

func TestSignIn(t *testing.T) {
	e := newEnv(t, true)
	b := e.browser()
	state, code := b.startSignIn("/explorer/namespaces/mdr16")
	before := b.cookies[SessionCookie]
	if before == nil || !before.HttpOnly || before.SameSite != http.SameSiteLaxMode || before.Path != "/explorer" || before.Secure {
		t.Fatalf("session cookie %+v", before)
	}
	rec := b.do("GET", CallbackPath+"?"+url.Values{"state": {state}, "code": {code}}.Encode(), nil)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("callback: %d %s", rec.Code, rec.Body)
	}
	after := b.cookies[SessionCookie]
	if after.Value == before.Value {
		t.Fatal("the session id did not change at sign-in")
	}
	if _, err := e.store.Get(context.Background(), before.Value); err == nil {
		t.Fatal("the pre-sign-in session still exists")
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
		if rec := b.do("GET", cb, nil); rec.Code != 400 || !strings.Contains(rec.Body.String(), "used already") {
			t.Fatalf("replayed callback: %d\n%s", rec.Code, rec.Body)
		}
		// A good sign-in, replayed after success, finds no flow either.
		state, code = b.startSignIn("/explorer/")
		cb = CallbackPath + "?" + url.Values{"state": {state}, "code": {code}}.Encode()
		if rec := b.do("GET", cb, nil); rec.Code != 303 {
			t.Fatalf("callback %d", rec.Code)
		}
		if rec := b.do("GET", cb, nil); rec.Code != 400 {
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

func TestNotConfigured(t *testing.T) {
	e := newEnv(t, false)
	b := e.browser()
	rec := b.do("GET", LoginPath, nil)
	if rec.Code != 503 || !strings.Contains(rec.Body.String(), "not configured") {
		t.Fatalf("login without a client: %d\n%s", rec.Code, rec.Body)
	}
	if rec := b.do("GET", CallbackPath+"?state=x&code=y", nil); rec.Code != 503 {
		t.Fatalf("callback without a client: %d", rec.Code)
	}
	home := b.do("GET", "/explorer/", nil)
	if home.Code != 200 || !strings.Contains(home.Body.String(), "Search data set") || !strings.Contains(home.Body.String(), "not configured") || strings.Contains(home.Body.String(), LoginPath) {
		t.Fatalf("home without a client: %d\n%s", home.Code, home.Body)
	}
}

func TestLanguage(t *testing.T) {
	e := newEnv(t, true)
	b := e.browser()
	en := b.do("GET", "/explorer/dataelements/urn:mdr16:dataelement:15:1", nil).Body.String()
	for _, want := range []string{`<html lang="en">`, "Sample type tissue", "Permissible values", "tissue_frozen", "Tissue snap frozen", "Quellsystem_Typ", "KIS", `hreflang="de"`} {
		if !strings.Contains(en, want) {
			t.Errorf("English page lacks %q", want)
		}
	}
	de := b.do("GET", "/explorer/dataelements/urn:mdr16:dataelement:15:1", nil, "Accept-Language", "de-DE,de;q=0.9").Body.String()
	for _, want := range []string{`<html lang="de">`, "Materialart Gewebe", "Zulässige Werte", "Gewebe schockgefroren", `hreflang="en"`} {
		if !strings.Contains(de, want) {
			t.Errorf("German page lacks %q", want)
		}
	}
	// The switch: ?lang=en wins over the header and is remembered.
	sw := b.do("GET", "/explorer/?lang=en", nil, "Accept-Language", "de")
	if !strings.Contains(sw.Body.String(), `<html lang="en">`) || b.cookies["lang"] == nil || b.cookies["lang"].Value != "en" {
		t.Fatalf("lang=en: cookie %v\n%s", b.cookies["lang"], sw.Body)
	}
	if body := b.do("GET", "/explorer/", nil, "Accept-Language", "de").Body.String(); !strings.Contains(body, `<html lang="en">`) {
		t.Fatal("the remembered language was not used")
	}
	e.mdr.mu.Lock()
	last := e.mdr.langs[len(e.mdr.langs)-1]
	e.mdr.mu.Unlock()
	if last != "en" {
		t.Fatalf("the registry was asked in %q", last)
	}
	if m := messages.Missing(); len(m) > 0 {
		t.Errorf("texts missing: %v", m)
	}
}

func TestRegistryPages(t *testing.T) {
	e := newEnv(t, true)
	b := e.browser()
	for _, tc := range []struct {
		target string
		hdr    []string
		want   int
		texts  []string
		absent []string
	}{
		{target: "/", want: 200, texts: []string{"Open the FRIS Explorer", `href="/explorer/login"`}},
		{target: "/explorer/", want: 200, texts: []string{"Search data set", `href="/explorer/namespaces/mdr16"`, `class="skip" href="#main"`}},
		{target: "/explorer/namespaces/mdr16", want: 200, texts: []string{"Search data set", "Biobank", `href="/explorer/groups/urn:mdr16:dataelementgroup:1:1"`, `<label for="q">`}},
		{target: "/explorer/namespaces/nope", want: 404, texts: []string{"no such item"}},
		{target: "/explorer/namespaces/mdr16/search?q=age", want: 200, texts: []string{"Age at diagnosis", "Results for", "<footer>"}},
		{target: "/explorer/namespaces/mdr16/search?q=age", hdr: []string{"HX-Request", "true"}, want: 200, texts: []string{"Age at diagnosis"}, absent: []string{"<html", "<footer>"}},
		{target: "/explorer/namespaces/mdr16/search?q=zzz", want: 200, texts: []string{"Nothing matches"}},
		{target: "/explorer/groups/urn:mdr16:dataelementgroup:1:1", want: 200, texts: []string{"Biobank", "Sample type tissue", `href="/explorer/dataelements/urn:mdr16:dataelement:15:1"`}},
		{target: "/explorer/dataelements/urn:mdr16:dataelement:99:1", want: 404},
		{target: "/explorer/static/explorer.css", want: 200, texts: []string{"prefers-color-scheme"}},
		{target: "/explorer/static/htmx.min.js", want: 200},
		{target: "/explorer/static/nope.js", want: 404},
		{target: "/explorer/static/", want: 404},
		{target: "/explorer/nope", want: 404, texts: []string{"There is no such page.", `<html lang="en">`}},
	} {
		rec := b.do("GET", tc.target, nil, tc.hdr...)
		body := rec.Body.String()
		if rec.Code != tc.want {
			t.Errorf("%s: %d, want %d\n%s", tc.target, rec.Code, tc.want, body)
			continue
		}
		for _, s := range tc.texts {
			if !strings.Contains(body, s) {
				t.Errorf("%s lacks %q", tc.target, s)
			}
		}
		for _, s := range tc.absent {
			if strings.Contains(body, s) {
				t.Errorf("%s has %q", tc.target, s)
			}
		}
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") && !strings.Contains(rec.Header().Get("Content-Security-Policy"), "script-src 'self'") {
			t.Errorf("%s: CSP %q", tc.target, rec.Header().Get("Content-Security-Policy"))
		}
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
