package explorer

import (
	"context"
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
	brokerv1 "fris.dev/proto/broker/v1"
	mdrv1 "fris.dev/proto/mdr/v1"
	uploadv1 "fris.dev/proto/upload/v1"
)

// scopedVerifier is fakeVerifier with the scopes a test chooses.
type scopedVerifier struct {
	fakeVerifier
	scopes []string
}

func (v *scopedVerifier) Verify(ctx context.Context, tok string) (identity.Identity, error) {
	id, err := v.fakeVerifier.Verify(ctx, tok)
	if err == nil {
		id.Scopes = v.scopes
	}
	return id, err
}

// fakeAdmin stands in for the three admin APIs: it records each call with
// the identity the Explorer sent.
type fakeAdmin struct {
	brokerv1.BrokerAdminClient
	uploadv1.UploadAdminClient
	mdrv1.MdrAdminClient
	mu     sync.Mutex
	calls  []string
	banks  map[string]*brokerv1.Bank
	refuse error
}

func (f *fakeAdmin) saw(ctx context.Context, call string) {
	md, _ := metadata.FromOutgoingContext(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call+" as "+strings.Join(md.Get(identity.KeySubject), ",")+" "+strings.Join(md.Get(identity.KeyScope), ","))
}

func (f *fakeAdmin) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

var t0 = time.Unix(1_700_000_000, 0)

// ListSites is the site registry.
func (f *fakeAdmin) ListSites(ctx context.Context, _ *brokerv1.ListSitesRequest, _ ...grpc.CallOption) (*brokerv1.ListSitesResponse, error) {
	f.saw(ctx, "ListSites")
	return &brokerv1.ListSitesResponse{SiteIds: []string{"charite", "dresden", "mainz"}, Sites: []*brokerv1.Site{
		{Id: "charite", NameDe: "Charité Berlin", NameEn: "Charité Berlin"},
		{Id: "dresden", NameDe: "Universitätsklinikum Dresden", NameEn: "University Hospital Dresden"},
		{Id: "mainz", NameDe: "mainz", NameEn: "mainz"},
	}}, nil
}

func (f *fakeAdmin) ListBanks(ctx context.Context, _ *brokerv1.ListBanksRequest, _ ...grpc.CallOption) (*brokerv1.ListBanksResponse, error) {
	f.saw(ctx, "ListBanks")
	f.mu.Lock()
	defer f.mu.Unlock()
	res := &brokerv1.ListBanksResponse{}
	for _, e := range []string{"new@bank.example", "old@bank.example"} {
		if b := f.banks[e]; b != nil {
			res.Banks = append(res.Banks, b)
		}
	}
	return res, nil
}

func (f *fakeAdmin) set(ctx context.Context, call, email, site string) (*brokerv1.Bank, error) {
	f.saw(ctx, call+" "+email+" "+site)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refuse != nil {
		return nil, f.refuse
	}
	b := f.banks[email]
	if b == nil {
		return nil, status.Error(codes.NotFound, "no bank "+email)
	}
	b.SiteId, b.Status, b.ApprovedAt = site, brokerv1.BankStatus_ACTIVE, timestamppb.New(t0)
	return b, nil
}

func (f *fakeAdmin) ApproveBank(ctx context.Context, r *brokerv1.ApproveBankRequest, _ ...grpc.CallOption) (*brokerv1.Bank, error) {
	return f.set(ctx, "ApproveBank", r.GetEmail(), r.GetSiteId())
}

func (f *fakeAdmin) LinkBankSite(ctx context.Context, r *brokerv1.LinkBankSiteRequest, _ ...grpc.CallOption) (*brokerv1.Bank, error) {
	return f.set(ctx, "LinkBankSite", r.GetEmail(), r.GetSiteId())
}

func (f *fakeAdmin) DeleteBank(ctx context.Context, r *brokerv1.AdminDeleteBankRequest, _ ...grpc.CallOption) (*brokerv1.AdminDeleteBankResponse, error) {
	f.saw(ctx, "DeleteBank "+r.GetEmail())
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.banks, r.GetEmail())
	return &brokerv1.AdminDeleteBankResponse{}, nil
}

func (f *fakeAdmin) ListMonitoring(ctx context.Context, _ *brokerv1.ListMonitoringRequest, _ ...grpc.CallOption) (*brokerv1.ListMonitoringResponse, error) {
	f.saw(ctx, "ListMonitoring")
	return &brokerv1.ListMonitoringResponse{Reports: []*brokerv1.MonitoringReport{{BankEmail: "old@bank.example", SiteId: "charite",
		ReceivedAt: timestamppb.New(t0.Add(-2 * time.Hour)), Items: []*brokerv1.MonitoringItem{
			{ParameterName: "CENTRALSEARCH_PING", StatusText: "ok", ExitStatus: "0"},
			{ParameterName: "LOCALSTORE_COUNT", StatusText: "store unreachable", ExitStatus: "1"}}}}}, nil
}

func (f *fakeAdmin) ListTeilers(ctx context.Context, _ *uploadv1.ListTeilersRequest, _ ...grpc.CallOption) (*uploadv1.ListTeilersResponse, error) {
	f.saw(ctx, "ListTeilers")
	return &uploadv1.ListTeilersResponse{Teilers: []*uploadv1.TeilerStatus{
		{Teiler: &uploadv1.Teiler{SiteId: "charite", TeilerId: "t1"}, Patients: 120, LastUpload: timestamppb.New(t0.Add(-24 * time.Hour)),
			LastStored: timestamppb.New(t0.Add(-25 * time.Hour)), Credentials: 1},
		{Teiler: &uploadv1.Teiler{SiteId: "dresden", TeilerId: "t1"}, Patients: 7, LastStored: timestamppb.New(t0.Add(-8 * 24 * time.Hour)), Credentials: 2, Disabled: 1},
		{Teiler: &uploadv1.Teiler{SiteId: "mainz", TeilerId: "t2"}, Credentials: 1},
	}}, nil
}

func (f *fakeAdmin) ListNamespaces(ctx context.Context, _ *mdrv1.AdminListNamespacesRequest, _ ...grpc.CallOption) (*mdrv1.AdminListNamespacesResponse, error) {
	f.saw(ctx, "ListNamespaces")
	return &mdrv1.AdminListNamespacesResponse{Generation: 3, LastChange: timestamppb.New(t0.Add(-3 * 24 * time.Hour)), Namespaces: []*mdrv1.NamespaceInfo{
		{Name: "mdr16", Elements: 210, Members: 12}, {Name: "secret", Private: true, Elements: 1, Members: 1}}}, nil
}

// newOperatorEnv is newEnv with the admin fakes and a verifier that grants
// the scopes given.
func newOperatorEnv(t *testing.T, scopes ...string) (*env, *fakeAdmin) {
	t.Helper()
	e := &env{t: t, idp: newIdP(), mdr: &fakeMDR{}, clock: &clock{t0}}
	v := &scopedVerifier{fakeVerifier: fakeVerifier{refused: map[string]bool{}}, scopes: scopes}
	fa := &fakeAdmin{banks: map[string]*brokerv1.Bank{
		"new@bank.example": {Email: "new@bank.example", Status: brokerv1.BankStatus_PENDING, RegisteredAt: timestamppb.New(t0.Add(-time.Hour)), ReportedSite: "Dresden"},
		"old@bank.example": {Email: "old@bank.example", Status: brokerv1.BankStatus_ACTIVE, SiteId: "charite", RegisteredAt: timestamppb.New(t0.Add(-48 * time.Hour)), ApprovedAt: timestamppb.New(t0.Add(-47 * time.Hour))},
	}}
	e.store = NewMemory(100, e.clock.now)
	a, err := New(Config{MDR: e.mdr, Verifier: v, Loopback: e.idp, Store: e.store, Now: e.clock.now,
		ClientID: "explorer", ClientSecret: "s3cret-s3cret-s3cret", Banks: fa, Uploads: fa, Registry: fa})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Register(mux)
	e.app, e.h = a, mux
	return e, fa
}

var operatorPages = []string{BanksPath, SitesPath, MonitoringPath, RegistryPath}

// TestOperatorViewsRefused: without the operator scope every operator page
// answers with the reason and calls no service; the nav hides them.
func TestOperatorViewsRefused(t *testing.T) {
	e, fa := newOperatorEnv(t, "openid", identity.ScopeResearcher)
	// Without a session: sign in first, then back to the page.
	anon := e.browser()
	for _, p := range append(operatorPages, OperatorPath) {
		rec := anon.do("GET", p, nil)
		if want := LoginPath + "?return=" + url.QueryEscape(p); rec.Code != http.StatusFound || rec.Header().Get("Location") != want {
			t.Errorf("anonymous %s: %d to %q, want 302 to %q", p, rec.Code, rec.Header().Get("Location"), want)
		}
	}
	if rec := anon.do("POST", ApprovePath, url.Values{"email": {"new@bank.example"}, "site_id": {"x"}}); rec.Code != http.StatusForbidden ||
		!strings.Contains(rec.Body.String(), "operator&#39;s account") {
		t.Errorf("anonymous approval: %d\n%s", rec.Code, rec.Body)
	}
	b := e.browser()
	b.signIn()
	for _, p := range operatorPages {
		rec := b.do("GET", p, nil)
		if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "lacks the operator role (scope fris:operator)") {
			t.Errorf("researcher %s: %d\n%s", p, rec.Code, rec.Body)
		}
	}
	if rec := b.do("GET", OperatorPath, nil); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "lacks the role (scope fris:operator or fris:user-admin)") {
		t.Errorf("researcher %s: %d\n%s", OperatorPath, rec.Code, rec.Body)
	}
	de := b.do("GET", SitesPath, nil, "Accept-Language", "de")
	if !strings.Contains(de.Body.String(), "Ihrem Konto fehlt die Betreiberrolle") {
		t.Errorf("German refusal:\n%s", de.Body)
	}
	sess, _ := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	rec := b.do("POST", ApprovePath, url.Values{CSRFField: {sess.CSRF}, "email": {"new@bank.example"}, "site_id": {"dresden"}})
	if rec.Code != http.StatusForbidden {
		t.Errorf("a researcher's approval: %d", rec.Code)
	}
	if home := b.do("GET", "/explorer/", nil).Body.String(); strings.Contains(home, OperatorPath) {
		t.Error("the nav shows the operator views to a researcher")
	}
	if c := fa.seen(); len(c) != 0 {
		t.Errorf("services called: %v", c)
	}
}

// TestOperatorViewsWithoutSignIn: a gateway without the Explorer's client
// cannot sign anyone in; the operator views say so instead of redirecting.
func TestOperatorViewsWithoutSignIn(t *testing.T) {
	e := newEnv(t, false)
	rec := e.browser().do("GET", SitesPath, nil)
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "operator&#39;s account") {
		t.Fatalf("sites without sign-in configured: %d\n%s", rec.Code, rec.Body)
	}
}

// TestOperatorBanks: an operator sees the waiting bank, approves it with
// a site, relinks and deletes; each change goes to the broker with the
// operator's identity and needs the form's CSRF token and this origin.
func TestOperatorBanks(t *testing.T) {
	e, fa := newOperatorEnv(t, "openid", identity.ScopeOperator)
	b := e.browser()
	b.signIn()
	if home := b.do("GET", "/explorer/", nil).Body.String(); !strings.Contains(home, `href="/explorer/operator/banks"`) {
		t.Error("the nav hides the operator views from an operator")
	}
	if rec := b.do("GET", OperatorPath, nil); rec.Code != http.StatusFound || rec.Header().Get("Location") != BanksPath {
		t.Errorf("operator home: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	sess, _ := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	page := b.do("GET", BanksPath, nil)
	body := page.Body.String()
	for _, want := range []string{"Waiting for approval", "new@bank.example", `value="Dresden"`, `name="csrf_token" value="` + sess.CSRF + `"`,
		`action="/explorer/operator/banks/approve"`, "Approved banks", "old@bank.example", `<option value="charite" label="Charité Berlin">`, `<option value="mainz">`,
		`aria-current="page">Banks`, `role="status"`} {
		if !strings.Contains(body, want) {
			t.Errorf("banks page lacks %q", want)
		}
	}
	if page.Code != 200 {
		t.Fatalf("banks: %d", page.Code)
	}
	// A status line that the list contradicts is a forged link's: none.
	for _, q := range []string{"?done=deleted&bank=old%40bank.example", "?done=approved&bank=new%40bank.example", "?done=approved&bank=x%40y.example"} {
		if body := b.do("GET", BanksPath+q, nil).Body.String(); strings.Contains(body, `class="done"`) {
			t.Errorf("%s shows a status line", q)
		}
	}
	approve := url.Values{CSRFField: {sess.CSRF}, "email": {"new@bank.example"}, "site_id": {"dresden"}}
	for _, tc := range []struct {
		name string
		form url.Values
		hdr  []string
		want int
	}{
		{"no token", url.Values{"email": {"new@bank.example"}, "site_id": {"dresden"}}, nil, 403},
		{"wrong token", url.Values{CSRFField: {"x"}, "email": {"new@bank.example"}, "site_id": {"dresden"}}, nil, 403},
		{"another origin", approve, []string{"Origin", "https://evil.example"}, 403},
		{"another site", approve, []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"no site", url.Values{CSRFField: {sess.CSRF}, "email": {"new@bank.example"}}, nil, 400},
	} {
		if rec := b.do("POST", ApprovePath, tc.form, tc.hdr...); rec.Code != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, rec.Code, tc.want)
		}
	}
	if c := fa.seen(); len(c) != 8 {
		t.Fatalf("a refused form reached the broker: %v", c)
	}
	rec := b.do("POST", ApprovePath, approve, "Origin", "http://gw.test", "Sec-Fetch-Site", "same-origin")
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != BanksPath+"?bank=new%40bank.example&done=approved" {
		t.Fatalf("approve: %d %q\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	after := b.do("GET", rec.Header().Get("Location"), nil).Body.String()
	if !strings.Contains(after, "new@bank.example is approved.") || !strings.Contains(after, "No bank is waiting for approval.") {
		t.Errorf("after approving:\n%s", after)
	}
	if rec := b.do("POST", LinkPath, url.Values{CSRFField: {sess.CSRF}, "email": {"old@bank.example"}, "site_id": {"mainz"}}); rec.Code != http.StatusSeeOther {
		t.Errorf("link: %d", rec.Code)
	}
	fa.mu.Lock()
	fa.refuse = status.Error(codes.InvalidArgument, `site id "a b" has a space`)
	fa.mu.Unlock()
	if rec := b.do("POST", LinkPath, url.Values{CSRFField: {sess.CSRF}, "email": {"old@bank.example"}, "site_id": {"a b"}}); rec.Code != 400 ||
		!strings.Contains(rec.Body.String(), "The service refused: site id &#34;a b&#34; has a space") {
		t.Errorf("a refused link: %d\n%s", rec.Code, rec.Body)
	}
	if rec := b.do("POST", DeletePath, url.Values{CSRFField: {sess.CSRF}, "email": {"old@bank.example"}}); rec.Code != http.StatusSeeOther {
		t.Errorf("delete: %d", rec.Code)
	}
	want := []string{
		"ListBanks as 42 openid,fris:operator", "ListSites as 42 openid,fris:operator",
		"ListBanks as 42 openid,fris:operator", "ListSites as 42 openid,fris:operator",
		"ListBanks as 42 openid,fris:operator", "ListSites as 42 openid,fris:operator",
		"ListBanks as 42 openid,fris:operator", "ListSites as 42 openid,fris:operator",
		"ApproveBank new@bank.example dresden as 42 openid,fris:operator",
		"ListBanks as 42 openid,fris:operator", "ListSites as 42 openid,fris:operator",
		"LinkBankSite old@bank.example mainz as 42 openid,fris:operator",
		"LinkBankSite old@bank.example a b as 42 openid,fris:operator",
		"DeleteBank old@bank.example as 42 openid,fris:operator",
	}
	if got := fa.seen(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestOperatorSites: teilers without an upload for longer than the stale
// age are highlighted, in both languages.
func TestOperatorSites(t *testing.T) {
	e, _ := newOperatorEnv(t, identity.ScopeOperator)
	b := e.browser()
	b.signIn()
	rec := b.do("GET", SitesPath, nil)
	body := rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("sites: %d\n%s", rec.Code, body)
	}
	row := func(site string) string {
		i := strings.Index(body, `data-site="`+site+`"`)
		if i < 0 {
			t.Fatalf("no row for %s", site)
		}
		start := strings.LastIndex(body[:i], "<tr")
		return body[start : i+strings.Index(body[i:], "</tr>")]
	}
	if r := row("charite"); strings.Contains(r, "stale") || !strings.Contains(r, "120") || !strings.Contains(r, `datetime="2023-11-13T22:13:20Z"`) ||
		!strings.Contains(r, "24 h ago") || !strings.Contains(r, "old@bank.example") {
		t.Errorf("charite row: %s", r)
	}
	if r := row("dresden"); !strings.Contains(r, `class="stale"`) || !strings.Contains(r, "8 days ago") || !strings.Contains(r, "1 of 2 credentials turned off") {
		t.Errorf("dresden row: %s", r)
	}
	if r := row("mainz"); !strings.Contains(r, `class="stale"`) || !strings.Contains(r, "never") {
		t.Errorf("mainz row: %s", r)
	}
	if !strings.Contains(body, "2 teilers have not uploaded for more than 7 days.") {
		t.Error("no count of stale teilers")
	}
	de := b.do("GET", SitesPath, nil, "Accept-Language", "de").Body.String()
	for _, w := range []string{"Standorte und Uploads", "vor 8 Tagen", "Kein aktueller Upload", "nie", "seit mehr als 7 Tage"} {
		if !strings.Contains(de, w) {
			t.Errorf("German sites page lacks %q", w)
		}
	}
}

func TestOperatorMonitoringAndRegistry(t *testing.T) {
	e, fa := newOperatorEnv(t, identity.ScopeOperator)
	b := e.browser()
	b.signIn()
	for _, tc := range []struct {
		path, lang string
		want       []string
	}{
		{MonitoringPath, "en", []string{"old@bank.example", "charite", "CENTRALSEARCH_PING", "store unreachable", "A check failed", "2 h ago"}},
		{MonitoringPath, "de", []string{"Eine Prüfung ist fehlgeschlagen", "Rückgabewert", "vor 2 Std."}},
		{RegistryPath, "en", []string{"Registry status", "mdr16", "210", "private", "3 days ago", "<dd>211</dd>", `href="/explorer/namespaces/mdr16"`}},
		{RegistryPath, "de", []string{"Registerstatus", "privat", "öffentlich", "vor 3 Tagen"}},
	} {
		rec := b.do("GET", tc.path, nil, "Accept-Language", tc.lang)
		if rec.Code != 200 {
			t.Errorf("%s: %d", tc.path, rec.Code)
		}
		for _, w := range tc.want {
			if !strings.Contains(rec.Body.String(), w) {
				t.Errorf("%s (%s) lacks %q", tc.path, tc.lang, w)
			}
		}
	}
	for _, c := range fa.seen() {
		if !strings.HasSuffix(c, " as 42 fris:operator") {
			t.Errorf("call without the operator's identity: %s", c)
		}
	}
}

func TestParseAge(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"7d", 7 * 24 * time.Hour, true},
		{"36h", 36 * time.Hour, true},
		{" 1d ", 24 * time.Hour, true},
		{"0d", 0, false},
		{"-1d", 0, false},
		{"d", 0, false},
		{"1.5d", 0, false},
		{"-5h", 0, false},
		{"soon", 0, false},
		{"", 0, false},
	} {
		got, err := ParseAge(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseAge(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func FuzzParseAge(f *testing.F) {
	for _, s := range []string{"7d", "36h", "1h30m", "3650d", "3651d", "0d", "-1d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseAge(s)
		if err == nil && d <= 0 {
			t.Fatalf("ParseAge(%q) = %v without an error", s, d)
		}
	})
}
