package e2e

import (
	"context"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"fris.dev/pkg/identity"
	brokerv1 "fris.dev/proto/broker/v1"
	mdrv1 "fris.dev/proto/mdr/v1"
	uploadv1 "fris.dev/proto/upload/v1"
)

// operatorStack is an Explorer stack whose broker approves banks (the
// registration mode the banks view is for) with the demo sites' upload
// credentials.
func operatorStack(t *testing.T) *Stack {
	t.Helper()
	s := explorerStack(t, Options{BrokerArgs: []string{"-name", brokerName, "-registration", "approval"}})
	seedSites(t, s)
	return s
}

// userID is the auth service's id of the user with email: the subject of
// their tokens, and so the actor of what they do.
func userID(t *testing.T, s *Stack, email string) string {
	t.Helper()
	for _, line := range strings.Split(s.AuthCLI(t, 0, "users"), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == email {
			return f[0]
		}
	}
	t.Fatalf("no user %s", email)
	return ""
}

// signIn signs the demo user in through the login form.
func (p *page) signIn(s *Stack) {
	p.t.Helper()
	p.do("sign in", chromedp.Navigate(s.URL+"/explorer/login?return=%2Fexplorer%2F"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), demoEmail), chromedp.SendKeys(chromedp.ID("password"), demoPass),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS(".user-name")))
}

func (p *page) signOut() {
	p.t.Helper()
	p.do("sign out", chromedp.Click(chromedp.CSS(`form[action="/explorer/logout"] button`)), chromedp.WaitVisible(chromedp.CSS(`header a.button`)))
}

func (p *page) count(sel string) int {
	p.t.Helper()
	n, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+"`"+sel+"`"+`).length`))
	if err != nil {
		p.t.Fatal(err)
	}
	return n
}

// TestExplorerOperator: a user without the operator role sees no operator
// views; with it, they approve a bank that registered through the banks'
// API and link it to a site, see a site's last upload after an upload
// through the upload API, the bank's monitoring report and the registry's
// status, in English and German, on a phone-sized screen too. The broker
// audits the approval with the operator as the actor.
func TestExplorerOperator(t *testing.T) {
	t.Parallel()
	p := newPage(t)
	s := operatorStack(t)
	b := registerBank(t, s, "biobank@charite.example")
	wantText(t, s, http.MethodGet, sb+"/banks/"+b.email+"/status", nil, 202, b.auth()...)
	upText(t, s, http.MethodPut, charite.spec()+"/pats/OP-1", patientDoc("OP-1", "Patient", ""), 201, charite.xml()...)
	upText(t, s, http.MethodPut, charite.spec()+"/uploadStats", "<Uploadstats/>", 200, charite.xml()...)

	// A researcher (no operator role): no link, and the pages say why.
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeResearcher, demoEmail)
	p.signIn(s)
	if n := p.count(`a[href^="/explorer/operator"]`); n != 0 {
		t.Errorf("a researcher's page has %d links to the operator views", n)
	}
	p.do("open the banks view anyway", chromedp.Navigate(s.URL+"/explorer/operator/banks"), chromedp.WaitVisible(chromedp.CSS("[role=alert]")))
	p.wantText("[role=alert]", "lacks the operator role", "fris:operator")
	p.wantText("main", "Status 403")
	p.check("operator-refused-en")
	p.signOut()

	// The role reaches the user's next token: signing in again, which the
	// operator view asks for and then returns to.
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeResearcher+","+identity.ScopeOperator, demoEmail)
	p.do("open the banks view signed out", chromedp.Navigate(s.URL+"/explorer/operator/banks"), chromedp.WaitVisible(chromedp.ID("email")))
	p.do("sign in as an operator", chromedp.SendKeys(chromedp.ID("email"), demoEmail), chromedp.SendKeys(chromedp.ID("password"), demoPass),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("li.pending")))
	if loc := p.location(); loc != s.URL+"/explorer/operator/banks" {
		t.Errorf("signed in at %s, want the banks view", loc)
	}
	if n := p.count(`nav.sections a[href="/explorer/operator/banks"][aria-current="page"]`); n != 1 {
		t.Errorf("the nav has %d current links to the operator views, want 1", n)
	}
	p.wantText("h1", "Banks")
	p.wantText("li.pending", b.email, "Registered")
	p.check("operator-banks-en")

	p.do("approve the bank for charite", chromedp.SendKeys(chromedp.CSS(`li.pending input[name=site_id]`), "charite"),
		chromedp.Click(chromedp.CSS(`li.pending form[action$="/approve"] button`)), chromedp.WaitVisible(chromedp.CSS(`#op-status .done[data-done="approved"]`)))
	p.wantText("#op-status", b.email+" is approved.")
	p.wantText("main", "No bank is waiting for approval.", "Approved banks")
	p.wantText("code.site", "charite")
	p.check("operator-banks-approved-en")
	// The bank sees it through its own API; the broker's audit names the
	// operator and the Explorer's client, not the gateway or "admin-api".
	wantText(t, s, http.MethodGet, sb+"/banks/"+b.email+"/status", nil, 200, b.auth()...)
	op := userID(t, s, demoEmail)
	waitAudit(t, s.Broker, "broker.admin.ApproveBank", map[string]any{"actor": op, "client": explorerClient, "email": b.email, "site_id": "charite", "outcome": "success"})

	// The connector reports its status.
	report := `[{"parameter_name":"bridgehead-teiler-version","status_text":"7.2.0","exit_status":"0"},` +
		`{"parameter_name":"bridgehead-referencequery-resultcount","status_text":"store unreachable","exit_status":"1"}]`
	if res, body := s.Do(t, http.MethodPut, "/broker/rest/monitoring", strings.NewReader(report), append(b.auth(), "Content-Type", "application/json")...); res.StatusCode != 200 {
		t.Fatalf("monitoring report: %d %s", res.StatusCode, body)
	}

	p.do("open the sites", chromedp.Click(chromedp.CSS(`nav.optabs a[href="/explorer/operator/sites"]`)), chromedp.WaitVisible(chromedp.CSS("table.sites")))
	p.wantText(`tr[data-site="charite"]`, "teiler1", "1", "just now", b.email, "Up to date")
	p.wantText(`tr.stale[data-site="dresden"]`, "never", "No recent upload")
	p.wantText("main", "One teiler has not uploaded for more than 7 days.")
	p.check("operator-sites-en")

	p.do("switch to German", chromedp.Click(chromedp.CSS(`a[hreflang="de"]`)), chromedp.WaitVisible(chromedp.CSS(`html[lang="de"]`)))
	p.wantText("h1", "Standorte und Uploads")
	p.wantText(`tr[data-site="dresden"]`, "nie", "Kein aktueller Upload")
	p.check("operator-sites-de")

	p.do("open the monitoring", chromedp.Click(chromedp.CSS(`nav.optabs a[href="/explorer/operator/monitoring"]`)), chromedp.WaitVisible(chromedp.CSS("section.report")))
	p.wantText("section.report", b.email, "charite", "bridgehead-teiler-version", "store unreachable", "Eine Prüfung ist fehlgeschlagen")
	p.check("operator-monitoring-de")

	p.do("open the registry status", chromedp.Click(chromedp.CSS(`nav.optabs a[href="/explorer/operator/registry"]`)), chromedp.WaitVisible(chromedp.CSS("dd.changed time")))
	p.wantText("main", "Registerstatus", "mdr16", "öffentlich")
	p.check("operator-registry-de")

	// Relinking (by the keyboard: Enter in the field) and deleting.
	p.do("switch to English", chromedp.Navigate(s.URL+"/explorer/operator/banks?lang=en"), chromedp.WaitVisible(chromedp.CSS("li.bank")))
	p.do("relink the bank", chromedp.Clear(chromedp.CSS(`li.bank form[action$="/link"] input[name=site_id]`)),
		chromedp.SendKeys(chromedp.CSS(`li.bank form[action$="/link"] input[name=site_id]`), "dresden"+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#op-status .done[data-done="linked"]`)))
	p.wantText("#op-status", "is linked to its new site")
	p.wantText("code.site", "dresden")
	p.do("open the deletion", chromedp.Click(chromedp.CSS(`li.bank details summary`)), chromedp.WaitVisible(chromedp.CSS(`li.bank form[action$="/delete"] button`)))
	p.check("operator-banks-delete-open")
	p.do("delete the bank", chromedp.Click(chromedp.CSS(`li.bank form[action$="/delete"] button`)), chromedp.WaitVisible(chromedp.CSS(`#op-status .done[data-done="deleted"]`)))
	p.wantText("#op-status", b.email+" is deleted.")
	p.wantText("main", "No bank has been approved yet.")
	waitAudit(t, s.Broker, "broker.admin.DeleteBank", map[string]any{"actor": op, "email": b.email, "outcome": "success"})
	wantText(t, s, http.MethodGet, sb+"/banks/"+b.email+"/status", nil, 404, b.auth()...)

	// Last, as the emulation stays: a phone-sized screen.
	p.do("the sites again", chromedp.Navigate(s.URL+"/explorer/operator/sites"), chromedp.WaitVisible(chromedp.CSS("table.sites")))
	p.do("a 360 px screen", chromedp.EmulateViewport(360, 740, chromedp.EmulateMobile))
	width, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if err != nil {
		t.Fatal(err)
	}
	if width > 360 {
		t.Errorf("the sites page is %d px wide on a 360 px screen", width)
	}
	p.check("operator-sites-360px")
	p.colorScheme("dark")
	p.shot("operator-sites-360px-dark")
	p.colorScheme("light")
}

// TestExplorerOperatorServices: the services themselves, over mutual TLS
// with the gateway's certificate, admit the operator views' admin calls
// only for an identity with fris:operator, and no other admin call.
func TestExplorerOperatorServices(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{})
	gw := dialAs(t, "gateway")
	broker := brokerv1.NewBrokerAdminClient(conn(t, s.BrokerAddr, gw))
	upload := uploadv1.NewUploadAdminClient(conn(t, s.UploadAddr, gw))
	mdr := mdrv1.NewMdrAdminClient(conn(t, s.MDRAddr, gw))
	calls := map[string]func(context.Context) error{
		"broker ListBanks": func(ctx context.Context) error {
			_, err := broker.ListBanks(ctx, &brokerv1.ListBanksRequest{})
			return err
		},
		"broker ListMonitoring": func(ctx context.Context) error {
			_, err := broker.ListMonitoring(ctx, &brokerv1.ListMonitoringRequest{})
			return err
		},
		"broker ApproveBank": func(ctx context.Context) error {
			_, err := broker.ApproveBank(ctx, &brokerv1.ApproveBankRequest{Email: "nobody@bank.example", SiteId: "charite"})
			return err
		},
		"broker UpdateSite": func(ctx context.Context) error {
			_, err := broker.UpdateSite(ctx, &brokerv1.UpdateSiteRequest{Id: "nosuch", NameEn: proto.String("x")})
			return err
		},
		"upload ListTeilers": func(ctx context.Context) error {
			_, err := upload.ListTeilers(ctx, &uploadv1.ListTeilersRequest{})
			return err
		},
		"mdr ListNamespaces": func(ctx context.Context) error {
			_, err := mdr.ListNamespaces(ctx, &mdrv1.AdminListNamespacesRequest{})
			return err
		},
	}
	names := make([]string, 0, len(calls))
	for n := range calls {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		call := calls[name]
		for _, tc := range []struct {
			who  string
			ctx  func() (context.Context, context.CancelFunc)
			want codes.Code
		}{
			{"the gateway alone", func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 10*time.Second)
			}, codes.Unauthenticated},
			{"a researcher", func() (context.Context, context.CancelFunc) { return forged("r-1", identity.ScopeResearcher, "openid") }, codes.PermissionDenied},
			{"an operator", func() (context.Context, context.CancelFunc) { return forged("op-1", identity.ScopeOperator) }, codes.OK},
		} {
			ctx, cancel := tc.ctx()
			err := call(ctx)
			cancel()
			want := tc.want
			if (name == "broker ApproveBank" || name == "broker UpdateSite") && want == codes.OK {
				want = codes.NotFound // admitted: the bank does not exist
			}
			wantCode(t, name+" for "+tc.who, err, want)
		}
	}
	// Admin calls the views do not need stay closed to the gateway, even
	// for an operator.
	ctx, cancel := forged("op-1", identity.ScopeOperator)
	defer cancel()
	_, err := broker.ListInquiries(ctx, &brokerv1.AdminListInquiriesRequest{})
	wantCode(t, "broker ListInquiries", err, codes.PermissionDenied)
	_, err = upload.ListPatients(ctx, &uploadv1.ListPatientsRequest{Teiler: &uploadv1.Teiler{SiteId: "charite", TeilerId: "teiler1"}})
	wantCode(t, "upload ListPatients", err, codes.PermissionDenied)
	_, err = mdr.Import(ctx, &mdrv1.ImportRequest{})
	wantCode(t, "mdr Import", err, codes.PermissionDenied)
	// The CLIs' admin certificate keeps them, and shows what the views show.
	s.BrokerCLI(t, 0, "banks")
	seedSites(t, s)
	upText(t, s, http.MethodPut, charite.spec()+"/pats/CLI-1", patientDoc("CLI-1", "Patient", ""), 201, charite.xml()...)
	out := s.UploadCLI(t, 0, "teilers")
	if !regexp.MustCompile(`charite\s+teiler1\s+1\s+never\s+20\d\d-`).MatchString(out) || !regexp.MustCompile(`dresden\s+teiler1\s+0\s+never\s+never`).MatchString(out) {
		t.Errorf("upload teilers:\n%s", out)
	}
	wantContains(t, s.MDRCLI(t, 0, "namespaces"), "registry version 1, last changed 20")
}

// operatorPagesFast times the operator views for TestExplorerPagesFast:
// signed in as an operator, with two sites and an upload.
func operatorPagesFast(t *testing.T, s *Stack) {
	t.Helper()
	seedSites(t, s)
	upText(t, s, http.MethodPut, charite.spec()+"/pats/FAST-1", patientDoc("FAST-1", "Patient", ""), 201, charite.xml()...)
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator, demoEmail)
	c := signInHTTP(t, s)
	for _, lang := range []string{"en", "de"} {
		for _, path := range []string{"/explorer/operator/banks", "/explorer/operator/sites", "/explorer/operator/monitoring", "/explorer/operator/registry"} {
			get := func() (int, time.Duration) {
				req, err := http.NewRequest(http.MethodGet, s.URL+path, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Accept-Language", lang)
				start := time.Now()
				res, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				readAll(t, res)
				return res.StatusCode, time.Since(start)
			}
			get()
			var took []time.Duration
			for range 5 {
				code, d := get()
				if code != 200 {
					t.Fatalf("%s: %d", path, code)
				}
				took = append(took, d)
			}
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			t.Logf("%s (%s, operator): median %v, slowest %v", path, lang, took[2], took[4])
		}
	}
}
