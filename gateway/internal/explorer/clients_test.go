package explorer

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/identity"
	authv1 "fris.dev/proto/auth/v1"
)

// fakeClients stands in for auth's admin API for clients and keys: a
// client table, a key list, and each call with the identity the Explorer
// sent.
type fakeClients struct {
	authv1.AuthAdminClient
	mu      sync.Mutex
	calls   []string
	clients []*authv1.ClientRecord
	keys    []*authv1.SigningKey
	n       int
	listErr error
}

func (f *fakeClients) saw(ctx context.Context, call string) {
	md, _ := metadata.FromOutgoingContext(ctx)
	f.calls = append(f.calls, call+" as "+strings.Join(md.Get(identity.KeySubject), ","))
}

func (f *fakeClients) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeClients) find(id string) *authv1.ClientRecord {
	for _, c := range f.clients {
		if c.GetClient().GetClientId() == id {
			return c
		}
	}
	return nil
}

func (f *fakeClients) ListAllClients(ctx context.Context, _ *authv1.ListAllClientsRequest, _ ...grpc.CallOption) (*authv1.ListAllClientsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, "ListAllClients")
	if f.listErr != nil {
		return nil, f.listErr
	}
	return &authv1.ListAllClientsResponse{Clients: f.clients}, nil
}

func (f *fakeClients) CreateClient(ctx context.Context, r *authv1.CreateClientRequest, _ ...grpc.CallOption) (*authv1.CreateClientResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, fmt.Sprintf("CreateClient %q %q %q %q %s secret=%q", r.GetClientId(), r.GetName(), r.GetDescription(), r.GetRedirectUrl(), r.GetType(), r.GetSecret()))
	if strings.HasPrefix(r.GetRedirectUrl(), "ftp:") {
		return nil, status.Error(codes.InvalidArgument, "redirect URL must be an absolute http(s) URL")
	}
	id := r.GetClientId()
	if id == "" {
		id = fmt.Sprintf("generated-%d", f.n+1)
	}
	if f.find(id) != nil {
		return nil, status.Error(codes.AlreadyExists, "client exists")
	}
	c := &authv1.ClientRecord{Client: &authv1.Client{ClientId: id, Name: r.GetName(), Description: r.GetDescription(), RedirectUrl: r.GetRedirectUrl(), Type: r.GetType()}, Created: uint32(t0.Unix()), Alg: cmp.Or(r.GetAlg(), "RS256")}
	f.clients = append(f.clients, c)
	f.n++
	return &authv1.CreateClientResponse{Client: c, Secret: fmt.Sprintf("first-secret-%d", f.n)}, nil
}

func (f *fakeClients) UpdateClient(ctx context.Context, r *authv1.UpdateClientRequest, _ ...grpc.CallOption) (*authv1.UpdateClientResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, fmt.Sprintf("UpdateClient %s %q %q %q", r.GetClientId(), r.GetName(), r.GetDescription(), r.GetRedirectUrl()))
	c := f.find(r.GetClientId())
	if c == nil {
		return nil, status.Error(codes.NotFound, "no client "+r.GetClientId())
	}
	c.Client.Name, c.Client.Description, c.Client.RedirectUrl = r.GetName(), r.GetDescription(), r.GetRedirectUrl()
	if r.Alg != nil {
		c.Alg = r.GetAlg()
	}
	return &authv1.UpdateClientResponse{Client: c}, nil
}

func (f *fakeClients) RotateClientSecret(ctx context.Context, r *authv1.RotateClientSecretRequest, _ ...grpc.CallOption) (*authv1.RotateClientSecretResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, fmt.Sprintf("RotateClientSecret %s revoke=%v secret=%q", r.GetClientId(), r.GetRevokeTokens(), r.GetSecret()))
	c := f.find(r.GetClientId())
	if c == nil {
		return nil, status.Error(codes.NotFound, "no client "+r.GetClientId())
	}
	f.n++
	return &authv1.RotateClientSecretResponse{Client: c, Secret: fmt.Sprintf("rotated-secret-%d", f.n)}, nil
}

func (f *fakeClients) SetClientDisabled(ctx context.Context, r *authv1.SetClientDisabledRequest, _ ...grpc.CallOption) (*authv1.SetClientDisabledResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, fmt.Sprintf("SetClientDisabled %s %v", r.GetClientId(), r.GetDisabled()))
	c := f.find(r.GetClientId())
	if c == nil {
		return nil, status.Error(codes.NotFound, "no client "+r.GetClientId())
	}
	c.Disabled = r.GetDisabled()
	return &authv1.SetClientDisabledResponse{}, nil
}

func (f *fakeClients) ListKeys(ctx context.Context, _ *authv1.ListKeysRequest, _ ...grpc.CallOption) (*authv1.ListKeysResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, "ListKeys")
	return &authv1.ListKeysResponse{Keys: f.keys}, nil
}

func (f *fakeClients) RotateKeys(ctx context.Context, _ *authv1.RotateKeysRequest, _ ...grpc.CallOption) (*authv1.RotateKeysResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, "RotateKeys")
	now := uint32(t0.Unix())
	for _, k := range f.keys {
		if k.Active {
			k.Active, k.Retired, k.PublishUntil = false, now, now+86400
		}
	}
	k := &authv1.SigningKey{Kid: fmt.Sprintf("kid-%d", len(f.keys)+1), Alg: "RS256", Created: now, Active: true}
	f.keys = append(f.keys, k)
	return &authv1.RotateKeysResponse{Key: k}, nil
}

// newClientsEnv is newUsersEnv for the clients and keys views: the
// Explorer's own client, another, and three keys (one expired, one still
// published, the active one).
func newClientsEnv(t *testing.T, scopes ...string) (*env, *fakeClients) {
	t.Helper()
	e := &env{t: t, idp: newIdP(), mdr: &fakeMDR{}, clock: &clock{t0}}
	v := &scopedVerifier{fakeVerifier: fakeVerifier{refused: map[string]bool{}}, scopes: scopes}
	now := uint32(t0.Unix())
	fc := &fakeClients{
		clients: []*authv1.ClientRecord{
			{Client: &authv1.Client{ClientId: "explorer", Name: "FRIS Explorer", RedirectUrl: "http://gw.test/explorer/callback", Type: "UNDEFINED"}, Created: now - 86400},
			{Client: &authv1.Client{ClientId: "lab-app", Name: "Lab app", Description: "the lab's <registry>", RedirectUrl: "https://lab.example/cb,https://lab.example/cb2", Type: "MDR"}, Created: now - 3600},
		},
		keys: []*authv1.SigningKey{
			{Kid: "old-kid", Alg: "RS256", Created: now - 30*86400, Retired: now - 20*86400, PublishUntil: now - 19*86400},
			{Kid: "prev-kid", Alg: "RS256", Created: now - 10*86400, Retired: now - 3600, PublishUntil: now + 86400},
			{Kid: "cur-kid", Alg: "RS512", Created: now - 3600, Active: true},
		},
	}
	e.store = NewMemory(100, e.clock.now)
	a, err := New(Config{MDR: e.mdr, Verifier: v, Loopback: e.idp, Store: e.store, Now: e.clock.now,
		ClientID: "explorer", ClientSecret: "s3cret-s3cret-s3cret", Users: fc})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Register(mux)
	e.app, e.h = a, mux
	return e, fc
}

func wantBody(t *testing.T, what, body string, want, absent []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
	for _, w := range absent {
		if strings.Contains(body, w) {
			t.Errorf("%s has %q", what, w)
		}
	}
}

// The clients and keys views' routes, added to access_test.go's table
// here so that the views' files stay together.
func init() {
	for _, p := range []string{"GET " + ClientsPath, "GET " + KeysPath, "POST " + KeysRotatePath} {
		wantAccess[p] = operator
	}
	for _, p := range clientForms[:5] {
		wantAccess["POST "+p] = operator
	}
}

var clientForms = []string{ClientCreatePath, ClientUpdatePath, ClientRotatePath, ClientDisablePath, ClientEnablePath, KeysRotatePath}

// TestClientsRefused: without the operator scope both views and their
// forms answer 403 with the reason and call nothing.
func TestClientsRefused(t *testing.T) {
	e, fc := newClientsEnv(t, "openid", identity.ScopeResearcher, identity.ScopeUserSearch)
	b := e.browser()
	b.signIn()
	for _, p := range []string{ClientsPath, KeysPath} {
		if rec := b.do("GET", p, nil); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "lacks the operator role (scope fris:operator)") {
			t.Errorf("researcher %s: %d\n%s", p, rec.Code, rec.Body)
		}
	}
	sess, _ := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	for _, p := range clientForms {
		form := url.Values{CSRFField: {sess.CSRF}, "client_id": {"lab-app"}, "name": {"x"}, "confirm": {"yes"}}
		if rec := b.do("POST", p, form); rec.Code != http.StatusForbidden {
			t.Errorf("researcher POST %s: %d", p, rec.Code)
		}
	}
	if c := fc.seen(); len(c) != 0 {
		t.Errorf("auth called: %v", c)
	}
}

// TestClientsList: every client with its facts, the Explorer's own marked
// and without the rotate and disable forms; German too.
func TestClientsList(t *testing.T) {
	e, fc := newClientsEnv(t, "openid", identity.ScopeOperator)
	b := e.browser()
	b.signIn()
	rec := b.do("GET", ClientsPath, nil)
	if rec.Code != 200 {
		t.Fatalf("%d\n%s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	wantBody(t, "clients page", body, []string{
		`aria-current="page">Clients`, `<code>lab-app</code>`, "the lab&#39;s &lt;registry&gt;", "<li><code>https://lab.example/cb2</code></li>",
		"<dd>MDR</dd>", "FRIS Explorer <code>explorer</code>", "this Explorer", "The client this Explorer signs in with",
		`<textarea id="client-1-redirects" name="redirect_urls" rows="3" aria-describedby="client-1-redirects-hint">https://lab.example/cb` + "\nhttps://lab.example/cb2\n</textarea>",
		`<option value="UNDEFINED">UNDEFINED</option>`,
	}, []string{`id="client-secret"`})
	// The Explorer's own client (client-0, first by name) has no
	// rotate or disable form; the other has both.
	if n := strings.Count(body, `action="/explorer/operator/clients/rotate-secret"`); n != 1 {
		t.Errorf("%d rotate forms, want 1 (not the Explorer's own client)", n)
	}
	if n := strings.Count(body, `action="/explorer/operator/clients/disable"`); n != 1 {
		t.Errorf("%d disable forms, want 1", n)
	}
	// A status line the list does not bear out is a forged link's.
	if body := b.do("GET", ClientsPath+"?done=disabled&client=lab-app", nil).Body.String(); strings.Contains(body, `class="done"`) {
		t.Error("a forged status line is shown")
	}
	de := b.do("GET", ClientsPath, nil, "Accept-Language", "de").Body.String()
	wantBody(t, "German clients page", de, []string{"Client anlegen", "Neues Geheimnis …", "Diesen Client sperren …", "Weiterleitungs-URLs"}, nil)
	for _, c := range fc.seen() {
		if c != "ListAllClients as 42" {
			t.Errorf("call %q", c)
		}
	}
}

// TestClientsActions: each form needs this origin and the CSRF token, the
// destructive ones the confirmation; a secret is shown on the answer to
// its creation or rotation and on no later page; each call carries the
// operator's identity.
func TestClientsActions(t *testing.T) {
	e, fc := newClientsEnv(t, "openid", identity.ScopeOperator)
	b := e.browser()
	b.signIn()
	sess, _ := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	tok := sess.CSRF
	long := strings.Repeat("https://a.example/cb\n", maxRedirects+1)
	for _, tc := range []struct {
		name, path string
		form       url.Values
		hdr        []string
		want       int
		reason     string
	}{
		{"no token", ClientCreatePath, url.Values{"name": {"x"}}, nil, 403, ""},
		{"wrong token", ClientRotatePath, url.Values{CSRFField: {"x"}, "client_id": {"lab-app"}, "confirm": {"yes"}}, nil, 403, ""},
		{"another origin", ClientCreatePath, url.Values{CSRFField: {tok}, "name": {"x"}}, []string{"Origin", "https://evil.example"}, 403, ""},
		{"cross-site", ClientDisablePath, url.Values{CSRFField: {tok}, "client_id": {"lab-app"}, "confirm": {"yes"}}, []string{"Sec-Fetch-Site", "cross-site"}, 403, ""},
		{"no id", ClientUpdatePath, url.Values{CSRFField: {tok}, "name": {"x"}}, nil, 400, "lacks the client ID"},
		{"too many redirects", ClientUpdatePath, url.Values{CSRFField: {tok}, "client_id": {"lab-app"}, "name": {"x"}, "redirect_urls": {long}}, nil, 400, "At most 32 redirect URLs"},
		{"a redirect too long", ClientCreatePath, url.Values{CSRFField: {tok}, "name": {"x"}, "type": {"MDR"}, "redirect_urls": {"https://a/" + strings.Repeat("x", 2048)}}, nil, 400, "At most 32 redirect URLs"},
		{"unknown type", ClientCreatePath, url.Values{CSRFField: {tok}, "name": {"x"}, "type": {"ROOT"}}, nil, 400, "a known type"},
		{"name too long", ClientUpdatePath, url.Values{CSRFField: {tok}, "client_id": {"lab-app"}, "name": {strings.Repeat("n", 257)}}, nil, 400, "too long"},
		{"rotate unconfirmed", ClientRotatePath, url.Values{CSRFField: {tok}, "client_id": {"lab-app"}}, nil, 400, "Please confirm"},
		{"disable unconfirmed", ClientDisablePath, url.Values{CSRFField: {tok}, "client_id": {"lab-app"}, "confirm": {"on"}}, nil, 400, "Please confirm"},
		{"rotate the Explorer's own", ClientRotatePath, url.Values{CSRFField: {tok}, "client_id": {"explorer"}, "confirm": {"yes"}}, nil, 400, "the client the Explorer signs in with"},
		{"disable the Explorer's own", ClientDisablePath, url.Values{CSRFField: {tok}, "client_id": {"explorer"}, "confirm": {"yes"}}, nil, 400, "the client the Explorer signs in with"},
		{"keys unconfirmed", KeysRotatePath, url.Values{CSRFField: {tok}}, nil, 400, "Please confirm"},
		{"keys without token", KeysRotatePath, url.Values{"confirm": {"yes"}}, nil, 403, ""},
	} {
		rec := b.do("POST", tc.path, tc.form, tc.hdr...)
		if rec.Code != tc.want || !strings.Contains(rec.Body.String(), tc.reason) {
			t.Errorf("%s: %d, want %d with %q\n%s", tc.name, rec.Code, tc.want, tc.reason, rec.Body)
		}
	}
	if c := fc.seen(); len(c) != 0 {
		t.Fatalf("a refused form reached auth: %v", c)
	}

	post := func(path string, form url.Values) *http.Response {
		t.Helper()
		form.Set(CSRFField, tok)
		return b.do("POST", path, form, "Origin", "http://gw.test", "Sec-Fetch-Site", "same-origin").Result()
	}
	readBody := func(t *testing.T, res *http.Response) string {
		t.Helper()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// Creation: the secret on the answer, the form's secret never sent.
	res := post(ClientCreatePath, url.Values{"name": {" New app "}, "description": {"for tests"}, "type": {"FORMREPOSITORY"},
		"redirect_urls": {"https://new.example/cb\r\n\r\n https://new.example/cb2 ,https://new.example/cb3"}, "secret": {"ignored-ignored-ignored"}})
	body := readBody(t, res)
	if res.StatusCode != 200 || res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create: %d %q\n%s", res.StatusCode, res.Header.Get("Cache-Control"), body)
	}
	wantBody(t, "the creation's answer", body, []string{`<code id="client-secret">first-secret-1</code>`, `<code id="new-client-id">generated-1</code>`,
		"The client generated-1 is created.", "shown this once"}, nil)
	if body := b.do("GET", ClientsPath, nil).Body.String(); strings.Contains(body, "first-secret-1") {
		t.Error("the list shows the secret again")
	}
	// A taken id: 409 with auth's reason; auth's refusal of a URL: 400 with it.
	if rec := b.do("POST", ClientCreatePath, url.Values{CSRFField: {tok}, "client_id": {"lab-app"}, "name": {"x"}, "type": {"MDR"}}); rec.Code != http.StatusConflict ||
		!strings.Contains(rec.Body.String(), "The service refused: client exists") {
		t.Errorf("a taken id: %d\n%s", rec.Code, rec.Body)
	}
	if rec := b.do("POST", ClientCreatePath, url.Values{CSRFField: {tok}, "name": {"x"}, "type": {"MDR"}, "redirect_urls": {"ftp://a/cb"}}); rec.Code != http.StatusBadRequest ||
		!strings.Contains(rec.Body.String(), "must be an absolute http(s) URL") {
		t.Errorf("a bad URL: %d\n%s", rec.Code, rec.Body)
	}

	// Rotation: the new secret on the answer, and only there.
	res = post(ClientRotatePath, url.Values{"client_id": {"lab-app"}, "confirm": {"yes"}, "revoke": {"yes"}})
	body = readBody(t, res)
	if res.StatusCode != 200 {
		t.Fatalf("rotate: %d\n%s", res.StatusCode, body)
	}
	wantBody(t, "the rotation's answer", body, []string{`<code id="client-secret">rotated-secret-2</code>`, "The client lab-app has a new secret; the old one is refused."}, nil)

	for _, s := range []struct {
		path string
		form url.Values
		done string
	}{
		{ClientUpdatePath, url.Values{"client_id": {"lab-app"}, "name": {"Lab app 2"}, "description": {""}, "redirect_urls": {""}}, "The client lab-app is saved."},
		{ClientDisablePath, url.Values{"client_id": {"lab-app"}, "confirm": {"yes"}}, "The client lab-app is disabled."},
		{ClientEnablePath, url.Values{"client_id": {"lab-app"}}, "The client lab-app is enabled."},
	} {
		res := post(s.path, s.form)
		if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), ClientsPath+"?") {
			t.Fatalf("%s: %d %q", s.path, res.StatusCode, res.Header.Get("Location"))
		}
		if body := b.do("GET", res.Header.Get("Location"), nil).Body.String(); !strings.Contains(body, s.done) {
			t.Errorf("after %s the page lacks %q", s.path, s.done)
		}
	}
	// A client gone meanwhile: 404 with auth's reason.
	if res := post(ClientUpdatePath, url.Values{"client_id": {"gone"}, "name": {"x"}}); res.StatusCode != http.StatusNotFound {
		t.Errorf("updating a missing client: %d", res.StatusCode)
	}

	var changes []string
	for _, c := range fc.seen() {
		if !strings.HasPrefix(c, "ListAllClients") {
			changes = append(changes, c)
		}
	}
	want := []string{
		`CreateClient "" "New app" "for tests" "https://new.example/cb,https://new.example/cb2,https://new.example/cb3" FORMREPOSITORY secret="" as 42`,
		`CreateClient "lab-app" "x" "" "" MDR secret="" as 42`,
		`CreateClient "" "x" "" "ftp://a/cb" MDR secret="" as 42`,
		`RotateClientSecret lab-app revoke=true secret="" as 42`,
		`UpdateClient lab-app "Lab app 2" "" "" as 42`,
		`SetClientDisabled lab-app true as 42`,
		`SetClientDisabled lab-app false as 42`,
		`UpdateClient gone "x" "" "" as 42`,
	}
	if strings.Join(changes, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(changes, "\n"), strings.Join(want, "\n"))
	}
}

// TestClientsSecretKept: a rotation made is shown with its secret even
// when the list cannot be read after it.
func TestClientsSecretKept(t *testing.T) {
	e, fc := newClientsEnv(t, "openid", identity.ScopeOperator)
	b := e.browser()
	b.signIn()
	sess, _ := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	fc.mu.Lock()
	fc.listErr = status.Error(codes.Unavailable, "auth is restarting")
	fc.mu.Unlock()
	rec := b.do("POST", ClientRotatePath, url.Values{CSRFField: {sess.CSRF}, "client_id": {"lab-app"}, "confirm": {"yes"}})
	if rec.Code != 200 {
		t.Fatalf("%d\n%s", rec.Code, rec.Body)
	}
	wantBody(t, "the rotation's answer", rec.Body.String(), []string{`<code id="client-secret">rotated-secret-1</code>`, "could not be read just now"}, []string{"There is no client yet."})
}

// TestKeys: newest first with their states; "rotate now" after the
// confirmation, and the list then says which key signs.
func TestKeys(t *testing.T) {
	e, fc := newClientsEnv(t, "openid", identity.ScopeOperator)
	b := e.browser()
	b.signIn()
	rec := b.do("GET", KeysPath, nil)
	if rec.Code != 200 {
		t.Fatalf("%d\n%s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	wantBody(t, "keys page", body, []string{`aria-current="page">Signing keys`,
		`data-state="active"`, "<code>cur-kid</code> <span class=\"badge ok\">active: signs new tokens of its algorithm</span>", "<dd>RS512</dd>",
		`data-state="published"`, "<code>prev-kid</code> <span class=\"badge\">retired, still published</span>",
		`<dt>Published until</dt><dd><time datetime="2023-11-15T22:13:20Z">2023-11-15 22:13 UTC</time></dd>`,
		`data-state="retired"`, "<code>old-kid</code>"}, []string{`class="done"`})
	if strings.Index(body, "cur-kid") > strings.Index(body, "prev-kid") || strings.Index(body, "prev-kid") > strings.Index(body, "old-kid") {
		t.Error("the keys are not newest first")
	}
	if body := b.do("GET", KeysPath+"?done=rotated&kid=prev-kid", nil).Body.String(); strings.Contains(body, `class="done"`) {
		t.Error("a status line for a key that does not sign is shown")
	}
	sess, _ := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	rec = b.do("POST", KeysRotatePath, url.Values{CSRFField: {sess.CSRF}, "confirm": {"yes"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != KeysPath+"?done=rotated&kid=kid-4" {
		t.Fatalf("rotate: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	body = b.do("GET", rec.Header().Get("Location"), nil).Body.String()
	wantBody(t, "keys page after the rotation", body, []string{"New keys sign from now on; the RSA key is kid-4.", `data-state="active"`}, nil)
	if n := strings.Count(body, `data-state="active"`); n != 1 {
		t.Errorf("%d active keys", n)
	}
	de := b.do("GET", KeysPath, nil, "Accept-Language", "de").Body.String()
	wantBody(t, "German keys page", de, []string{"Signaturschlüssel", "Jetzt rotieren …", "aktiv: signiert neue Tokens"}, nil)
	want := []string{"ListKeys as 42", "ListKeys as 42", "RotateKeys as 42", "ListKeys as 42", "ListKeys as 42"}
	if got := fc.seen(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls %v", got)
	}
}

// FuzzFormRedirects: whatever a form sends, the list auth receives has at
// most maxRedirects URLs of at most maxRedirectLen bytes, none empty or
// with a separator or surrounding space in it, and reading it again gives
// it back.
func FuzzFormRedirects(f *testing.F) {
	for _, s := range []string{"", "https://a/cb", "https://a/cb\r\nhttps://b/cb , ,https://c/cb", strings.Repeat("x,", 40), " \n\t,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := formRedirects(s)
		if !ok {
			return
		}
		us := splitRedirects(got)
		if len(us) > maxRedirects || strings.Join(us, ",") != got {
			t.Fatalf("%q -> %q", s, got)
		}
		for _, u := range us {
			if u == "" || len(u) > maxRedirectLen || strings.ContainsAny(u, ",\r\n") || strings.TrimSpace(u) != u {
				t.Fatalf("%q -> URL %q", s, u)
			}
		}
	})
}
