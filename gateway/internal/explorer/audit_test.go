package explorer

import (
	"context"
	"fmt"
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

	"fris.dev/pkg/audit"
	"fris.dev/pkg/identity"
	auditv1 "fris.dev/proto/audit/v1"
	authv1 "fris.dev/proto/auth/v1"
)

// fakeAudit stands in for one service's AuditAdmin: its events, newest
// first, listed as pkg/audit lists them (full pages with a token), and the
// calls with the identity the Explorer sent.
type fakeAudit struct {
	auditv1.AuditAdminClient
	name     string
	events   []*auditv1.AuditEvent
	settings []*auditv1.Setting
	err      error
	mu       sync.Mutex
	calls    []string
}

func (f *fakeAudit) saw(ctx context.Context, call string) {
	md, _ := metadata.FromOutgoingContext(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call+" as "+strings.Join(md.Get(identity.KeySubject), ","))
}

func (f *fakeAudit) ListEvents(ctx context.Context, r *auditv1.ListEventsRequest, _ ...grpc.CallOption) (*auditv1.ListEventsResponse, error) {
	f.saw(ctx, fmt.Sprintf("ListEvents actor=%s action=%s outcome=%v token=%s", r.GetActor(), r.GetActionPrefix(), r.GetOutcome(), r.GetPageToken()))
	if f.err != nil {
		return nil, f.err
	}
	started := r.GetPageToken() == ""
	res := &auditv1.ListEventsResponse{}
	for _, ev := range f.events {
		if !started {
			started = ev.GetId() == r.GetPageToken()
			continue
		}
		t := ev.GetTime().AsTime()
		if (r.GetActor() != "" && ev.GetActor() != r.GetActor()) || !strings.HasPrefix(ev.GetAction(), r.GetActionPrefix()) ||
			(r.GetClass() != 0 && ev.GetClass() != r.GetClass()) ||
			(r.GetOutcome() != 0 && ev.GetOutcome() != r.GetOutcome()) ||
			(r.GetSince() != nil && t.Before(r.GetSince().AsTime())) || (r.GetUntil() != nil && t.After(r.GetUntil().AsTime())) {
			continue
		}
		if len(res.Events) == int(r.GetPageSize()) {
			res.NextPageToken = res.Events[len(res.Events)-1].GetId()
			break
		}
		res.Events = append(res.Events, ev)
	}
	return res, nil
}

func (f *fakeAudit) GetSettings(ctx context.Context, _ *auditv1.GetSettingsRequest, _ ...grpc.CallOption) (*auditv1.GetSettingsResponse, error) {
	f.saw(ctx, "GetSettings")
	if f.err != nil {
		return nil, f.err
	}
	return &auditv1.GetSettingsResponse{Service: f.name, Settings: f.settings}, nil
}

// auditEvents makes n events of service svc, the i-th (from 0) at
// t0 - (i*step + offset) seconds: newest first.
func auditEvents(svc string, n int, step, offset time.Duration) []*auditv1.AuditEvent {
	var out []*auditv1.AuditEvent
	for i := range n {
		at := t0.Add(-(time.Duration(i)*step + offset))
		out = append(out, &auditv1.AuditEvent{Id: fmt.Sprintf("%016x-%016x", i, len(svc)), Time: timestamppb.New(at), Service: svc,
			Action: svc + ".admin.Do", Actor: "admin-api", Target: fmt.Sprintf("%s-%d", svc, i), Outcome: auditv1.Outcome_OUTCOME_OK})
	}
	return out
}

func newAuditEnv(t *testing.T, scopes []string, services ...*fakeAudit) *env {
	t.Helper()
	e := &env{t: t, idp: newIdP(), mdr: &fakeMDR{}, clock: &clock{t0}}
	v := &scopedVerifier{fakeVerifier: fakeVerifier{refused: map[string]bool{}}, scopes: scopes}
	users := &fakeUsers{users: []*authv1.UserRecord{{Id: 42, Email: "op@lab.example"}, {Id: 7, Email: "ada@lab.example"}}}
	var as []AuditService
	for _, s := range services {
		as = append(as, AuditService{Name: s.name, Client: s})
	}
	e.store = NewMemory(100, e.clock.now)
	a, err := New(Config{MDR: e.mdr, Verifier: v, Loopback: e.idp, Store: e.store, Now: e.clock.now,
		ClientID: "explorer", ClientSecret: "s3cret-s3cret-s3cret", Users: users, Audit: as,
		Settings: []audit.Setting{{Name: "max-body", Value: "10485760", Description: "largest request body accepted, in bytes"}}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Register(mux)
	e.app, e.h = a, mux
	return e
}

func mustGet(t *testing.T, b *browser, target string, code int, hdr ...string) string {
	t.Helper()
	rec := b.do("GET", target, nil, hdr...)
	if rec.Code != code {
		t.Fatalf("GET %s: %d, want %d\n%s", target, rec.Code, code, rec.Body)
	}
	return rec.Body.String()
}

// shownTargets are the events' targets in the order the page lists them.
func shownTargets(body string) []string {
	var out []string
	for _, part := range strings.Split(body, `<tr class="event"`)[1:] {
		row := part[:strings.Index(part, "</tr>")]
		for _, svc := range []string{"auth", "mdr", "upload", "broker"} {
			for i := 0; i < 200; i++ {
				if strings.Contains(row, fmt.Sprintf(">%s-%d<", svc, i)) {
					out = append(out, fmt.Sprintf("%s-%d", svc, i))
				}
			}
		}
	}
	return out
}

// TestAuditRefused: without the operator scope the audit and settings
// views answer 403 with the reason and call no service.
func TestAuditRefused(t *testing.T) {
	fa := &fakeAudit{name: "auth", events: auditEvents("auth", 3, time.Minute, 0)}
	e := newAuditEnv(t, []string{"openid", identity.ScopeResearcher}, fa)
	b := e.browser()
	b.signIn()
	for _, p := range []string{AuditPath, SettingsPath} {
		if body := mustGet(t, b, p, http.StatusForbidden); !strings.Contains(body, "lacks the operator role (scope fris:operator)") {
			t.Errorf("%s: no reason\n%s", p, body)
		}
	}
	if len(fa.calls) != 0 {
		t.Errorf("service called: %v", fa.calls)
	}
}

// TestAuditMerged: the services' events are merged newest first across
// pages, each event exactly once, every call with the operator's identity.
func TestAuditMerged(t *testing.T) {
	// auth: one event a minute; mdr: one every 7 minutes, in between.
	fa := &fakeAudit{name: "auth", events: auditEvents("auth", 70, time.Minute, 0)}
	fm := &fakeAudit{name: "mdr", events: auditEvents("mdr", 20, 7*time.Minute, 30*time.Second)}
	e := newAuditEnv(t, []string{"openid", identity.ScopeOperator}, fa, fm)
	b := e.browser()
	b.signIn()
	var all []string
	target := AuditPath
	for range 10 {
		body := mustGet(t, b, target, http.StatusOK)
		got := shownTargets(body)
		if len(got) > auditPerPage {
			t.Fatalf("page of %d events", len(got))
		}
		all = append(all, got...)
		i := strings.Index(body, `rel="next"`)
		if i < 0 {
			break
		}
		j := strings.LastIndex(body[:i], `href="`)
		target = strings.ReplaceAll(body[j+len(`href="`):i-2], "&amp;", "&")
	}
	// The expected order: all events by time, newest first.
	var want []string
	ai, mi := 0, 0
	for ai < 70 || mi < 20 {
		at := time.Duration(ai) * time.Minute
		mt := time.Duration(mi)*7*time.Minute + 30*time.Second
		if mi >= 20 || (ai < 70 && at < mt) {
			want = append(want, fmt.Sprintf("auth-%d", ai))
			ai++
		} else {
			want = append(want, fmt.Sprintf("mdr-%d", mi))
			mi++
		}
	}
	if strings.Join(all, " ") != strings.Join(want, " ") {
		t.Fatalf("pages listed\n%v\nwant\n%v", all, want)
	}
	for _, f := range []*fakeAudit{fa, fm} {
		for _, c := range f.calls {
			if !strings.HasSuffix(c, " as 42") {
				t.Errorf("%s: call %q without the operator's identity", f.name, c)
			}
		}
	}
}

// TestAuditFilters: the form's filters reach the services as they record
// events (an email as the user's id), the service filter asks one
// service, malformed values are 400 and call nothing.
func TestAuditFilters(t *testing.T) {
	fa := &fakeAudit{name: "auth", events: auditEvents("auth", 5, time.Minute, 0)}
	fa.events[1].Actor, fa.events[1].Outcome, fa.events[1].Action = "42", auditv1.Outcome_OUTCOME_DENIED, "auth.admin.SetUserDisabled"
	fa.events[1].Attrs = []*auditv1.Attr{{Key: "email", Value: "ada@lab.example"}}
	fb := &fakeAudit{name: "broker", events: auditEvents("broker", 3, time.Minute, 0)}
	e := newAuditEnv(t, []string{"openid", identity.ScopeOperator}, fa, fb)
	b := e.browser()
	b.signIn()

	body := mustGet(t, b, AuditPath+"?"+url.Values{"actor": {"OP@lab.example"}, "outcome": {"denied"}, "action": {"auth.admin."}}.Encode(), http.StatusOK)
	if got := shownTargets(body); strings.Join(got, " ") != "auth-1" {
		t.Errorf("filtered: %v", got)
	}
	for _, w := range []string{`<code>42</code> (op@lab.example)`, `<code>email=ada@lab.example</code>`, `value="OP@lab.example"`, `<option value="denied" selected>`} {
		if !strings.Contains(body, w) {
			t.Errorf("filtered page lacks %q", w)
		}
	}
	if c := fa.calls[len(fa.calls)-1]; c != "ListEvents actor=42 action=auth.admin. outcome=OUTCOME_DENIED token= as 42" {
		t.Errorf("auth called %q", c)
	}

	n := len(fa.calls)
	body = mustGet(t, b, AuditPath+"?service=broker", http.StatusOK)
	if got := shownTargets(body); strings.Join(got, " ") != "broker-0 broker-1 broker-2" || len(fa.calls) != n {
		t.Errorf("broker only: %v (auth calls %d -> %d)", got, n, len(fa.calls))
	}

	// From and to are UTC minutes, both included.
	from, to := t0.Add(-3*time.Minute).UTC().Format(dateForm), t0.Add(-2*time.Minute).UTC().Format(dateForm)
	body = mustGet(t, b, AuditPath+"?"+url.Values{"service": {"auth"}, "from": {from}, "to": {to}}.Encode(), http.StatusOK)
	if got := shownTargets(body); strings.Join(got, " ") != "auth-2 auth-3" {
		t.Errorf("from %s to %s: %v", from, to, got)
	}

	// Seconds too, as some browsers send them.
	body = mustGet(t, b, AuditPath+"?"+url.Values{"service": {"auth"}, "from": {from + ":20"}, "to": {to + ":20"}}.Encode(), http.StatusOK)
	if got := shownTargets(body); strings.Join(got, " ") != "auth-2 auth-3" {
		t.Errorf("from %s:20 to %s:20: %v", from, to, got)
	}

	// The class filter; a fold of anonymous refusals shows its count.
	fa.events[3].Class, fa.events[3].Count, fa.events[3].Actor = auditv1.Class_CLASS_ANONYMOUS, 37, "anonymous"
	fa.events[4].Class = auditv1.Class_CLASS_ADMIN
	body = mustGet(t, b, AuditPath+"?"+url.Values{"service": {"auth"}, "class": {"anonymous"}}.Encode(), http.StatusOK)
	if got := shownTargets(body); strings.Join(got, " ") != "auth-3" {
		t.Errorf("anonymous: %v", got)
	}
	for _, w := range []string{`data-class="anonymous" data-count="37"`, "37 attempts from this address in this minute", `<option value="anonymous" selected>`} {
		if !strings.Contains(body, w) {
			t.Errorf("the anonymous class's page lacks %q", w)
		}
	}
	if body = mustGet(t, b, AuditPath+"?"+url.Values{"service": {"auth"}, "class": {"admin"}}.Encode(), http.StatusOK); strings.Join(shownTargets(body), " ") != "auth-4" ||
		!strings.Contains(body, `data-class="admin" data-count="1"`) || strings.Contains(body, "attempts from this address") {
		t.Errorf("admin: %v", shownTargets(body))
	}

	n = len(fa.calls) + len(fb.calls)
	for _, q := range []string{"service=nosuch", "outcome=maybe", "class=root", "from=yesterday", "to=2026-13-01T00:00", "actor=" + strings.Repeat("a", 255),
		"page=auth:x", "page=nosuch:-", "page=auth:-,auth:-", "page=" + strings.Repeat("a", 600)} {
		if body := mustGet(t, b, AuditPath+"?"+q, http.StatusBadRequest); !strings.Contains(body, "The filter is malformed") {
			t.Errorf("%s: no reason", q)
		}
	}
	if len(fa.calls)+len(fb.calls) != n {
		t.Errorf("malformed filters called the services")
	}

	de := mustGet(t, b, AuditPath, http.StatusOK, "Accept-Language", "de")
	for _, w := range []string{"Ereignisse filtern", "Aktion beginnt mit", `aria-current="page">Audit`} {
		if !strings.Contains(de, w) {
			t.Errorf("German page lacks %q", w)
		}
	}
}

// TestAuditServiceDown: a service that fails is named with its reason,
// the others' events are shown.
func TestAuditServiceDown(t *testing.T) {
	fa := &fakeAudit{name: "auth", events: auditEvents("auth", 2, time.Minute, 0)}
	fu := &fakeAudit{name: "upload", err: status.Error(codes.Unavailable, "upload is down")}
	e := newAuditEnv(t, []string{"openid", identity.ScopeOperator}, fa, fu)
	b := e.browser()
	b.signIn()
	body := mustGet(t, b, AuditPath, http.StatusOK)
	if got := shownTargets(body); strings.Join(got, " ") != "auth-0 auth-1" || !strings.Contains(body, "upload: upload is down") {
		t.Errorf("events %v\n%s", got, body)
	}
	body = mustGet(t, b, SettingsPath, http.StatusOK)
	if !strings.Contains(body, "The service did not answer: upload is down") {
		t.Errorf("settings page does not name the failed service")
	}
}

// TestMergePages: the merge keeps each service's place, marks exhausted
// ones done, and never takes an event past a full page's last.
func TestMergePages(t *testing.T) {
	a := auditEvents("auth", 3, time.Minute, 0)
	m := auditEvents("mdr", 2, time.Minute, 30*time.Second)
	out, next, more := mergePages([]servicePage{{service: "auth", events: a, more: true}, {service: "mdr", events: m}}, auditCursor{}, 3)
	var got []string
	for _, ev := range out {
		got = append(got, ev.GetTarget())
	}
	if strings.Join(got, " ") != "auth-0 mdr-0 auth-1" || next["auth"] != a[1].GetId() || next["mdr"] != m[0].GetId() || !more {
		t.Fatalf("merged %v next %v more %v", got, next, more)
	}
	_, next, more = mergePages([]servicePage{{service: "auth", events: a[:1]}, {service: "mdr"}}, auditCursor{"auth": "x"}, 3)
	if next["auth"] != doneMark || next["mdr"] != doneMark || more {
		t.Fatalf("exhausted: next %v more %v", next, more)
	}
	if s := (auditCursor{"mdr": "-", "auth": a[0].GetId()}).String([]string{"auth", "mdr", "upload"}); s != "auth:"+a[0].GetId()+",mdr:-" {
		t.Fatalf("cursor %q", s)
	}
}

// FuzzAuditCursor: a page link's cursor from outside parses only into
// known services and well-formed ids, and round-trips.
func FuzzAuditCursor(f *testing.F) {
	f.Add("auth:0000000000000001-0000000000000004,mdr:-")
	f.Add("auth:-,auth:-")
	f.Add(":,")
	known := func(s string) bool { return s == "auth" || s == "mdr" }
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := parseAuditCursor(s, known)
		if !ok {
			return
		}
		for k, v := range c {
			if !known(k) || (v != doneMark && !eventID.MatchString(v)) {
				t.Fatalf("%q parsed into %q:%q", s, k, v)
			}
		}
		again, ok := parseAuditCursor(c.String([]string{"auth", "mdr"}), known)
		if !ok || len(again) != len(c) {
			t.Fatalf("%q does not round-trip", s)
		}
	})
}

// TestSettingsPage: the gateway's and each service's settings, grouped,
// a secret-looking name never shown whatever a service sends.
func TestSettingsPage(t *testing.T) {
	fa := &fakeAudit{name: "auth", settings: []*auditv1.Setting{
		{Name: "access-ttl", Value: "1h0m0s", Description: "lifetime of access tokens"},
		{Name: "smtp-password", Value: "hunter2-leaked", Description: "SMTP password"},
	}}
	e := newAuditEnv(t, []string{"openid", identity.ScopeOperator}, fa)
	b := e.browser()
	b.signIn()
	body := mustGet(t, b, SettingsPath, http.StatusOK)
	for _, w := range []string{`<h2 id="settings-gateway-heading">gateway</h2>`, `<h2 id="settings-auth-heading">auth</h2>`,
		`<code>-access-ttl</code>`, `<code>1h0m0s</code>`, "lifetime of access tokens", `<code>10485760</code>`, `aria-current="page">Settings`} {
		if !strings.Contains(body, w) {
			t.Errorf("settings page lacks %q", w)
		}
	}
	if strings.Contains(body, "hunter2") || strings.Contains(body, "smtp-password") {
		t.Errorf("settings page shows a secret")
	}
	if de := mustGet(t, b, SettingsPath, http.StatusOK, "Accept-Language", "de"); !strings.Contains(de, "Geheimnisse werden nie gezeigt") {
		t.Errorf("German settings page")
	}
	if c := fa.calls; len(c) != 2 || c[0] != "GetSettings as 42" {
		t.Errorf("calls %v", c)
	}
}
