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

	"fris.dev/gateway/internal/authn"
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
	// spec: answers in the spec's shape (-auth-answers spec): no
	// token_type or expires_in, the access token a JWT expiring at exp,
	// userinfo without sub or name.
	spec bool
	exp  int64
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
		if f.spec {
			claims := base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, `{"sub":"42","exp":%d}`, f.exp))
			_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprint("at-", f.serial, ".", claims, ".sig"),
				"refresh_token": fmt.Sprint("rt-", f.serial), "id_token": "it"})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprint("at-", f.serial), "refresh_token": fmt.Sprint("rt-", f.serial),
			"token_type": "Bearer", "expires_in": f.expiresIn})
	case "GET /oauth2/userinfo":
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer at-") {
			http.Error(w, "no", 403)
			return
		}
		if f.spec {
			_, _ = io.WriteString(w, `{"real_name":"Ada Lovelace","contact_information":"","locality":null,"email":"ada@example.org","email_verified":false}`)
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
	// stale plays an out-of-date revocation list under fail closed.
	stale bool
}

func (v *fakeVerifier) Verify(_ context.Context, tok string) (identity.Identity, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.stale {
		return identity.Identity{}, authn.ErrRevocationStale
	}
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
