package explorer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"fris.dev/pkg/identity"
	ratelimitv1 "fris.dev/proto/ratelimit/v1"
)

// fakeThrottles stands in for one service's ThrottleAdmin API: its
// throttles, and each call with the identity the Explorer sent.
type fakeThrottles struct {
	ratelimitv1.ThrottleAdminClient
	mu      sync.Mutex
	calls   []string
	list    []*ratelimitv1.Throttle
	listErr error
}

func (f *fakeThrottles) saw(ctx context.Context, call string) {
	md, _ := metadata.FromOutgoingContext(ctx)
	f.calls = append(f.calls, call+" as "+strings.Join(md.Get(identity.KeySubject), ","))
}

func (f *fakeThrottles) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeThrottles) ListThrottles(ctx context.Context, _ *ratelimitv1.ListThrottlesRequest, _ ...grpc.CallOption) (*ratelimitv1.ListThrottlesResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, "ListThrottles")
	if f.listErr != nil {
		return nil, f.listErr
	}
	return &ratelimitv1.ListThrottlesResponse{Throttles: f.list}, nil
}

func (f *fakeThrottles) LiftThrottle(ctx context.Context, r *ratelimitv1.LiftThrottleRequest, _ ...grpc.CallOption) (*ratelimitv1.LiftThrottleResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, "LiftThrottle "+r.GetId())
	if !throttleID.MatchString(r.GetId()) {
		return nil, status.Error(codes.InvalidArgument, "not a throttle's id")
	}
	for i, t := range f.list {
		if t.GetId() == r.GetId() {
			f.list = append(f.list[:i], f.list[i+1:]...)
			return &ratelimitv1.LiftThrottleResponse{Lifted: true, Throttle: t}, nil
		}
	}
	return &ratelimitv1.LiftThrottleResponse{}, nil
}

// keyID is a throttle's id as pkg/ratelimit names it.
func keyID(flow, kind, of string) string {
	sum := sha256.Sum256([]byte(of))
	return flow + ":" + kind + ":" + hex.EncodeToString(sum[:12])
}

func newThrottlesEnv(t *testing.T, scopes ...string) (*env, *fakeThrottles, *fakeThrottles) {
	t.Helper()
	e := &env{t: t, idp: newIdP(), mdr: &fakeMDR{}, clock: &clock{t0}}
	v := &scopedVerifier{fakeVerifier: fakeVerifier{refused: map[string]bool{}}, scopes: scopes}
	at := func(d time.Duration) *timestamppb.Timestamp { return timestamppb.New(t0.Add(d)) }
	auth := &fakeThrottles{list: []*ratelimitv1.Throttle{
		{Id: keyID("login", "ce", "alice@example.org"), Flow: "login", Kind: "ceiling", Account: "alice@example.org", Failures: 100, Refused: 7, Until: at(40 * time.Second)},
		{Id: keyID("login", "pa", "bob@example.org\x00192.0.2.7"), Flow: "login", Kind: "pair", Account: "bob@example.org", Addr: "192.0.2.7", Failures: 6, Refused: 1, Until: at(14 * time.Minute)},
		// Ended a moment ago: a service's clock and the gateway's differ.
		{Id: keyID("login", "ad", "192.0.2.9"), Flow: "login", Kind: "addr", Addr: "192.0.2.9", Until: at(-time.Second)},
	}}
	upload := &fakeThrottles{list: []*ratelimitv1.Throttle{
		{Id: keyID("basic", "ad", "2001:db8::/64"), Flow: "basic", Kind: "addr", Addr: "2001:db8::/64", Failures: 31, Until: at(3 * time.Hour)},
	}}
	e.store = NewMemory(100, e.clock.now)
	a, err := New(Config{MDR: e.mdr, Verifier: v, Loopback: e.idp, Store: e.store, Now: e.clock.now,
		ClientID: "explorer", ClientSecret: "s3cret-s3cret-s3cret",
		Throttles: []ThrottleService{{Name: "auth", Client: auth}, {Name: "upload", Client: upload}}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Register(mux)
	e.app, e.h = a, mux
	return e, auth, upload
}

func init() {
	wantAccess["GET "+ThrottlesPath] = operator
	wantAccess["POST "+ThrottleLiftPath] = operator
}

// TestThrottlesRefused: a researcher and a user administrator get 403 with
// the reason on the view and its form, and no service is called.
func TestThrottlesRefused(t *testing.T) {
	for _, scope := range []string{identity.ScopeResearcher, identity.ScopeUserAdmin} {
		e, auth, upload := newThrottlesEnv(t, "openid", scope)
		b := e.browser()
		b.signIn()
		if rec := b.do("GET", ThrottlesPath, nil); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "lacks the operator role (scope fris:operator)") {
			t.Errorf("%s: %d\n%s", scope, rec.Code, rec.Body)
		}
		sess, _ := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
		form := url.Values{CSRFField: {sess.CSRF}, "service": {"auth"}, "id": {keyID("login", "ce", "alice@example.org")}}
		if rec := b.do("POST", ThrottleLiftPath, form, "Sec-Fetch-Site", "same-origin"); rec.Code != http.StatusForbidden {
			t.Errorf("%s POST: %d", scope, rec.Code)
		}
		if c := append(auth.seen(), upload.seen()...); len(c) != 0 {
			t.Errorf("%s: services called: %v", scope, c)
		}
	}
}

// TestThrottlesList: every service's throttles, the longest-running
// first, with who, which limit, the counts and until when, one lift form
// each; an ended one is not shown; a service that does not answer is
// named; German too.
func TestThrottlesList(t *testing.T) {
	e, auth, upload := newThrottlesEnv(t, "openid", identity.ScopeOperator)
	b := e.browser()
	b.signIn()
	rec := b.do("GET", ThrottlesPath, nil)
	if rec.Code != 200 {
		t.Fatalf("%d\n%s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	wantBody(t, "throttles page", body, []string{
		`aria-current="page">Throttles`, "(auth, upload)",
		`<code class="account">bob@example.org</code> from <code class="addr">192.0.2.7</code>`,
		"Sign-in with a password", "this account from every address", "this account from this address", "Site credential (uploads)", "this address, any account",
		`<time datetime="2023-11-14T22:27:20Z">`, "(40 s left)", "(14 min left)", "(3 h left)",
		`<input type="hidden" name="service" value="upload"><input type="hidden" name="id" value="` + keyID("basic", "ad", "2001:db8::/64") + `">`,
	}, []string{"192.0.2.9", `class="done"`, `role="alert"`})
	if n := strings.Count(body, `action="/explorer/operator/throttles/lift"`); n != 3 {
		t.Errorf("%d lift forms, want 3", n)
	}
	// Longest-running first: upload's 3 h, then bob's, then alice's.
	if i, j, k := strings.Index(body, "2001:db8::/64"), strings.Index(body, "bob@example.org"), strings.Index(body, "alice@example.org"); !(i < j && j < k) {
		t.Errorf("not the longest-running first: %d %d %d", i, j, k)
	}
	de := b.do("GET", ThrottlesPath, nil, "Accept-Language", "de").Body.String()
	wantBody(t, "German throttles page", de, []string{"Drosselungen", "Anmeldung mit Passwort", "dieses Konto von allen Adressen", "noch 14 min", "Aufheben"}, nil)
	for _, c := range append(auth.seen(), upload.seen()...) {
		if c != "ListThrottles as 42" {
			t.Errorf("call %q", c)
		}
	}

	upload.mu.Lock()
	upload.listErr = status.Error(codes.Unavailable, "upload is down")
	upload.mu.Unlock()
	body = b.do("GET", ThrottlesPath, nil).Body.String()
	wantBody(t, "a page without upload", body, []string{`role="alert"`, "upload: upload is down", "alice@example.org"}, []string{"2001:db8::/64"})
	auth.mu.Lock()
	auth.list = nil
	auth.mu.Unlock()
	upload.mu.Lock()
	upload.listErr = nil
	upload.list = nil
	upload.mu.Unlock()
	wantBody(t, "an empty page", b.do("GET", ThrottlesPath, nil).Body.String(), []string{"Nothing is slowed now."}, []string{"<table"})
}

// TestThrottlesLift: the form needs this origin and the CSRF token and
// names a known service; a lift calls that service with the operator's
// identity and says so, by name, where the list and the key's name bear it
// out (a forged link shows nothing).
func TestThrottlesLift(t *testing.T) {
	e, auth, upload := newThrottlesEnv(t, "openid", identity.ScopeOperator)
	b := e.browser()
	b.signIn()
	sess, _ := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	tok := sess.CSRF
	bob := keyID("login", "pa", "bob@example.org\x00192.0.2.7")
	for _, tc := range []struct {
		name   string
		form   url.Values
		hdr    []string
		want   int
		reason string
	}{
		{"no token", url.Values{"service": {"auth"}, "id": {bob}}, nil, 403, ""},
		{"wrong token", url.Values{CSRFField: {"x"}, "service": {"auth"}, "id": {bob}}, nil, 403, ""},
		{"another origin", url.Values{CSRFField: {tok}, "service": {"auth"}, "id": {bob}}, []string{"Origin", "https://evil.example"}, 403, ""},
		{"cross-site", url.Values{CSRFField: {tok}, "service": {"auth"}, "id": {bob}}, []string{"Sec-Fetch-Site", "cross-site"}, 403, ""},
		{"unknown service", url.Values{CSRFField: {tok}, "service": {"mdr"}, "id": {bob}}, nil, 400, "names no throttle of a known service"},
		{"no id", url.Values{CSRFField: {tok}, "service": {"auth"}}, nil, 400, "names no throttle of a known service"},
		{"id too long", url.Values{CSRFField: {tok}, "service": {"auth"}, "id": {strings.Repeat("a", 65)}}, nil, 400, "names no throttle of a known service"},
	} {
		rec := b.do("POST", ThrottleLiftPath, tc.form, tc.hdr...)
		if rec.Code != tc.want || !strings.Contains(rec.Body.String(), tc.reason) {
			t.Errorf("%s: %d, want %d with %q\n%s", tc.name, rec.Code, tc.want, tc.reason, rec.Body)
		}
	}
	if c := append(auth.seen(), upload.seen()...); len(c) != 0 {
		t.Fatalf("a refused form reached a service: %v", c)
	}
	// The service's refusal of a malformed id: 400 with its reason.
	if rec := b.do("POST", ThrottleLiftPath, url.Values{CSRFField: {tok}, "service": {"auth"}, "id": {"login:kn:x"}}); rec.Code != http.StatusBadRequest ||
		!strings.Contains(rec.Body.String(), "not a throttle&#39;s id") {
		t.Errorf("a malformed id: %d\n%s", rec.Code, rec.Body)
	}

	rec := b.do("POST", ThrottleLiftPath, url.Values{CSRFField: {tok}, "service": {"auth"}, "id": {bob}}, "Origin", "http://gw.test", "Sec-Fetch-Site", "same-origin")
	loc := rec.Header().Get("Location")
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(loc, ThrottlesPath+"?") {
		t.Fatalf("lift: %d %q\n%s", rec.Code, loc, rec.Body)
	}
	body := b.do("GET", loc, nil).Body.String()
	wantBody(t, "the page after the lift", body, []string{`<p class="done" data-done="lifted">The throttle of bob@example.org from 192.0.2.7 is lifted: its next attempt is admitted at once.</p>`},
		[]string{"bob@example.org</code>"})
	if c := auth.seen(); len(c) < 2 || c[1] != "LiftThrottle "+bob+" as 42" {
		t.Errorf("auth's calls: %v", c)
	}
	if c := upload.seen(); len(c) == 0 || strings.Contains(strings.Join(c, " "), "Lift") {
		t.Errorf("upload's calls: %v", c)
	}
	// Again: nothing to lift, and the page says so.
	rec = b.do("POST", ThrottleLiftPath, url.Values{CSRFField: {tok}, "service": {"auth"}, "id": {bob}})
	if body := b.do("GET", rec.Header().Get("Location"), nil).Body.String(); !strings.Contains(body, "Nothing to lift: that throttle had ended already.") {
		t.Errorf("a second lift:\n%s", body)
	}
	// Forged links: another account than the id's, and a throttle still
	// listed.
	alice := keyID("login", "ce", "alice@example.org")
	for _, forged := range []url.Values{
		{"done": {"lifted"}, "service": {"auth"}, "id": {bob}, "account": {"mallory@example.org"}, "addr": {"192.0.2.7"}},
		{"done": {"lifted"}, "service": {"auth"}, "id": {alice}, "account": {"alice@example.org"}},
		{"done": {"ended"}, "service": {"auth"}, "id": {alice}},
		{"done": {"lifted"}, "service": {"mdr"}, "id": {bob}, "account": {"bob@example.org"}, "addr": {"192.0.2.7"}},
	} {
		if body := b.do("GET", ThrottlesPath+"?"+forged.Encode(), nil).Body.String(); strings.Contains(body, `class="done"`) {
			t.Errorf("a forged status line is shown for %v", forged)
		}
	}
}
