package explorer

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/identity"
	brokerv1 "fris.dev/proto/broker/v1"
)

// siteAdmin is fakeAdmin with a site registry that changes, refusing
// what the broker refuses with the broker's messages.
type siteAdmin struct {
	*fakeAdmin
	sites []*brokerv1.Site
	// down makes every registry call fail as a broker that is away.
	down bool
}

func (f *siteAdmin) ListSites(ctx context.Context, _ *brokerv1.ListSitesRequest, _ ...grpc.CallOption) (*brokerv1.ListSitesResponse, error) {
	f.saw(ctx, "ListSites")
	if f.down {
		return nil, status.Error(codes.Unavailable, "broker away")
	}
	return &brokerv1.ListSitesResponse{Sites: f.sites}, nil
}

// check is the broker's judgement of a site, in its words.
func (f *siteAdmin) check(s *brokerv1.Site) error {
	var msgs []string
	if s.GetNameDe() == "" && s.GetNameEn() == "" {
		msgs = append(msgs, "name_de or name_en is required")
	}
	if len(s.GetContact()) > 200 {
		msgs = append(msgs, "contact must be at most 200 bytes of printable UTF-8")
	}
	if l := s.GetLogoUrl(); l != "" && !strings.HasPrefix(l, "https://") {
		msgs = append(msgs, `logo_url "`+l+`" must be an absolute https URL of at most 2000 bytes`)
	}
	if len(msgs) > 0 {
		return status.Error(codes.InvalidArgument, strings.Join(msgs, "\n"))
	}
	return nil
}

func (f *siteAdmin) CreateSite(ctx context.Context, r *brokerv1.CreateSiteRequest, _ ...grpc.CallOption) (*brokerv1.Site, error) {
	f.saw(ctx, "CreateSite "+r.GetId())
	if f.down {
		return nil, status.Error(codes.Unavailable, "broker away")
	}
	if strings.Contains(r.GetId(), "/") {
		return nil, status.Errorf(codes.InvalidArgument, "site id %q must be 1-64 letters, digits, '.', '_' or '-'", r.GetId())
	}
	s := &brokerv1.Site{Id: r.GetId(), NameDe: r.GetNameDe(), NameEn: r.GetNameEn(), Contact: r.GetContact(), LogoUrl: r.GetLogoUrl()}
	if err := f.check(s); err != nil {
		return nil, err
	}
	for _, old := range f.sites {
		if old.GetId() == s.GetId() {
			return nil, status.Errorf(codes.AlreadyExists, "site %s exists already", s.GetId())
		}
	}
	f.sites = append(f.sites, s)
	return s, nil
}

func (f *siteAdmin) UpdateSite(ctx context.Context, r *brokerv1.UpdateSiteRequest, _ ...grpc.CallOption) (*brokerv1.Site, error) {
	f.saw(ctx, "UpdateSite "+r.GetId()+" "+r.GetNameDe()+"|"+r.GetNameEn()+"|"+r.GetContact()+"|"+r.GetLogoUrl())
	for i, s := range f.sites {
		if s.GetId() != r.GetId() {
			continue
		}
		n := &brokerv1.Site{Id: s.GetId(), NameDe: r.GetNameDe(), NameEn: r.GetNameEn(), Contact: r.GetContact(), LogoUrl: r.GetLogoUrl(), HasActiveBank: s.GetHasActiveBank()}
		if err := f.check(n); err != nil {
			return nil, err
		}
		f.sites[i] = n
		return n, nil
	}
	return nil, status.Errorf(codes.NotFound, "no site %s", r.GetId())
}

// newSiteEnv is newOperatorEnv with the changing registry.
func newSiteEnv(t *testing.T, scopes ...string) (*env, *siteAdmin, *browser, string) {
	t.Helper()
	e, fa := newOperatorEnv(t, scopes...)
	sa := &siteAdmin{fakeAdmin: fa, sites: []*brokerv1.Site{
		{Id: "charite", NameDe: "Charité Berlin", NameEn: "Charité Berlin", Contact: "info@charite.example", LogoUrl: "https://charite.example/logo.png", HasActiveBank: true},
		{Id: "dresden", NameDe: "Universitätsklinikum Dresden", NameEn: "University Hospital Dresden"},
	}}
	cfg := e.app.cfg
	cfg.Banks = sa
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Register(mux)
	e.app, e.h = a, mux
	b := e.browser()
	b.signIn()
	sess, _ := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	return e, sa, b, sess.CSRF
}

// TestSiteRegistryPage lists the sites with their names, contact and logo,
// with a form per site and one to add a site, in both languages.
func TestSiteRegistryPage(t *testing.T) {
	_, sa, b, csrf := newSiteEnv(t, "openid", identity.ScopeOperator)
	rec := b.do("GET", SiteRegistryPath, nil)
	body := rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("site registry: %d\n%s", rec.Code, body)
	}
	for _, want := range []string{`aria-current="page">Site registry`, `data-site="charite"`, "Charité Berlin", "info@charite.example",
		"<code>https://charite.example/logo.png</code>", `data-site="dresden"`, "University Hospital Dresden", "Universitätsklinikum Dresden",
		`action="/explorer/operator/site-registry/create"`, `action="/explorer/operator/site-registry/update"`, `name="csrf_token" value="` + csrf + `"`,
		`<input type="hidden" name="id" value="dresden">`, `id="site-1-name-en" name="name_en" maxlength="200" autocomplete="off" lang="en" value="University Hospital Dresden"`,
		"Change dresden", "Add a site", `role="status"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(body, "aria-invalid") || strings.Contains(body, `role="alert"`) {
		t.Error("a page without a refusal marks a field")
	}
	de := b.do("GET", SiteRegistryPath, nil, "Accept-Language", "de").Body.String()
	for _, want := range []string{"Standortverzeichnis", "Name (Deutsch)", "Standort hinzufügen", "dresden ändern"} {
		if !strings.Contains(de, want) {
			t.Errorf("the German page lacks %q", want)
		}
	}
	// The registry's broker away: the page says so, as every page does.
	sa.down = true
	if rec := b.do("GET", SiteRegistryPath, nil); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("broker away: %d", rec.Code)
	}
}

// TestSiteRegistryActions: adding and changing sites go to the broker with
// the operator's identity, need this origin and the session's CSRF token;
// a refusal is the page again with 400 (409 for a taken id), the values as
// sent, the reason and the fields it names marked.
func TestSiteRegistryActions(t *testing.T) {
	_, sa, b, csrf := newSiteEnv(t, "openid", identity.ScopeOperator)
	create := url.Values{CSRFField: {csrf}, "id": {"mainz"}, "name_de": {"Universitätsmedizin Mainz"}, "name_en": {"University Medicine Mainz"}, "contact": {"biobank@mainz.example"}, "logo_url": {""}}
	for _, tc := range []struct {
		name string
		form url.Values
		hdr  []string
		want int
	}{
		{"no token", url.Values{"id": {"mainz"}, "name_de": {"x"}}, nil, 403},
		{"wrong token", url.Values{CSRFField: {"x"}, "id": {"mainz"}, "name_de": {"x"}}, nil, 403},
		{"another origin", create, []string{"Origin", "https://evil.example"}, 403},
		{"another site", create, []string{"Sec-Fetch-Site", "cross-site"}, 403},
	} {
		for _, path := range []string{SiteCreatePath, SiteUpdatePath} {
			if rec := b.do("POST", path, tc.form, tc.hdr...); rec.Code != tc.want {
				t.Errorf("%s %s: %d, want %d", path, tc.name, rec.Code, tc.want)
			}
		}
	}
	if c := sa.seen(); len(c) != 0 {
		t.Fatalf("a refused form reached the broker: %v", c)
	}
	if rec := b.do("POST", SiteCreatePath, url.Values{CSRFField: {csrf}, "id": {strings.Repeat("x", maxSiteForm)}}); rec.Code != http.StatusRequestEntityTooLarge && rec.Code != http.StatusBadRequest {
		t.Errorf("an oversized form: %d", rec.Code)
	}

	rec := b.do("POST", SiteCreatePath, create, "Origin", "http://gw.test", "Sec-Fetch-Site", "same-origin")
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != SiteRegistryPath+"?done=created&site=mainz" {
		t.Fatalf("create: %d %q\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	if after := b.do("GET", rec.Header().Get("Location"), nil).Body.String(); !strings.Contains(after, "Site mainz is added.") || !strings.Contains(after, "University Medicine Mainz") {
		t.Errorf("after adding:\n%s", after)
	}
	// A status line for a site the list does not hold is a forged link's.
	if body := b.do("GET", SiteRegistryPath+"?done=created&site=nosuch", nil).Body.String(); strings.Contains(body, `class="done"`) {
		t.Error("a forged status line is shown")
	}

	edit := url.Values{CSRFField: {csrf}, "id": {"dresden"}, "name_de": {"Uniklinikum Dresden"}, "name_en": {"Dresden University Hospital"}, "contact": {""}, "logo_url": {"https://ukdd.example/l.svg"}}
	rec = b.do("POST", SiteUpdatePath, edit)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != SiteRegistryPath+"?done=updated&site=dresden" {
		t.Fatalf("update: %d %q\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	if after := b.do("GET", rec.Header().Get("Location"), nil).Body.String(); !strings.Contains(after, "Site dresden is saved.") || !strings.Contains(after, "Dresden University Hospital") {
		t.Errorf("after saving:\n%s", after)
	}

	// Refusals: the page again, the form open with what was sent.
	for _, tc := range []struct {
		name, path string
		form       url.Values
		code       int
		stem       string
		bad        []string
		reason     string
	}{
		{"http logo", SiteUpdatePath, url.Values{CSRFField: {csrf}, "id": {"charite"}, "name_de": {"Charité"}, "name_en": {"Charité"}, "logo_url": {"http://charite.example/l.png"}},
			400, "site-0", []string{"logo"}, "must be an absolute https URL"},
		{"no names", SiteUpdatePath, url.Values{CSRFField: {csrf}, "id": {"charite"}, "name_de": {""}, "name_en": {""}, "contact": {strings.Repeat("c", 201)}},
			400, "site-0", []string{"name-de", "name-en", "contact"}, "name_de or name_en is required"},
		{"bad id", SiteCreatePath, url.Values{CSRFField: {csrf}, "id": {"a/b"}, "name_de": {"Neu"}}, 400, "new", []string{"id"}, "site id &#34;a/b&#34; must be"},
		{"taken id", SiteCreatePath, url.Values{CSRFField: {csrf}, "id": {"charite"}, "name_de": {"Zweite Charité"}}, 409, "new", []string{"id"}, "site charite exists already"},
	} {
		rec := b.do("POST", tc.path, tc.form)
		body := rec.Body.String()
		if rec.Code != tc.code {
			t.Errorf("%s: %d, want %d\n%s", tc.name, rec.Code, tc.code, body)
			continue
		}
		if !strings.Contains(body, `role="alert" id="`+tc.stem+`-error">The service refused: `) || !strings.Contains(body, tc.reason) {
			t.Errorf("%s: no reason shown beside the form\n%s", tc.name, body)
		}
		for _, f := range tc.bad {
			i := strings.Index(body, `id="`+tc.stem+`-`+f+`"`)
			if i < 0 || !strings.Contains(body[i:i+strings.Index(body[i:], ">")], `aria-invalid="true"`) {
				t.Errorf("%s: field %s not marked", tc.name, f)
			}
		}
		if n := strings.Count(body, `aria-invalid="true"`); n != len(tc.bad) {
			t.Errorf("%s: %d fields marked, want %d", tc.name, n, len(tc.bad))
		}
		for k, vs := range tc.form {
			if k != CSRFField && k != "id" && vs[0] != "" && !strings.Contains(body, `value="`+vs[0]+`"`) {
				t.Errorf("%s: the form lost %s", tc.name, k)
			}
		}
	}
	if rec := b.do("POST", SiteUpdatePath, url.Values{CSRFField: {csrf}, "id": {"nosuch"}, "name_de": {"x"}}); rec.Code != http.StatusNotFound ||
		!strings.Contains(rec.Body.String(), "no site nosuch") {
		t.Errorf("update of an unknown site: %d\n%s", rec.Code, rec.Body)
	}
	sa.down = true
	if rec := b.do("POST", SiteCreatePath, create); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("create with the broker away: %d", rec.Code)
	}
	for _, c := range sa.seen() {
		if !strings.HasSuffix(c, " as 42 openid,fris:operator") {
			t.Errorf("call without the operator's identity: %s", c)
		}
	}
	var changes []string
	for _, c := range sa.seen() {
		if strings.HasPrefix(c, "CreateSite") || strings.HasPrefix(c, "UpdateSite") {
			changes = append(changes, strings.TrimSuffix(c, " as 42 openid,fris:operator"))
		}
	}
	want := []string{"CreateSite mainz", "UpdateSite dresden Uniklinikum Dresden|Dresden University Hospital||https://ukdd.example/l.svg",
		"UpdateSite charite Charité|Charité||http://charite.example/l.png", "UpdateSite charite ||" + strings.Repeat("c", 201) + "|",
		"CreateSite a/b", "CreateSite charite", "UpdateSite nosuch x|||", "CreateSite mainz"}
	if strings.Join(changes, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(changes, "\n"), strings.Join(want, "\n"))
	}
}

// TestSiteRegistryRefused: without the operator role, no page and no
// change, and the broker is not asked.
func TestSiteRegistryRefused(t *testing.T) {
	_, sa, b, csrf := newSiteEnv(t, "openid", identity.ScopeResearcher, identity.ScopeUserAdmin)
	if rec := b.do("GET", SiteRegistryPath, nil); rec.Code != http.StatusForbidden {
		t.Errorf("page: %d", rec.Code)
	}
	for _, p := range []string{SiteCreatePath, SiteUpdatePath} {
		if rec := b.do("POST", p, url.Values{CSRFField: {csrf}, "id": {"charite"}, "name_de": {"x"}}); rec.Code != http.StatusForbidden {
			t.Errorf("%s: %d", p, rec.Code)
		}
	}
	if c := sa.seen(); len(c) != 0 {
		t.Errorf("services called: %v", c)
	}
}

func TestSiteErrorFields(t *testing.T) {
	for msg, want := range map[string]string{
		`site id "a/b" must be 1-64 letters`:                                   "id",
		"name_de or name_en is required":                                       "name_de name_en",
		"name_de or name_en must be at most 200 bytes of printable UTF-8":      "name_de",
		"name_en must be at most 200 bytes\ncontact must be at most 200 bytes": "name_en contact",
		`logo_url "http://x" must be an absolute https URL`:                    "logo_url",
		"something else": "",
	} {
		var got []string
		for _, f := range siteFields {
			if siteErrorFields(msg)[f] {
				got = append(got, f)
			}
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("%q: %q, want %q", msg, strings.Join(got, " "), want)
		}
	}
}
