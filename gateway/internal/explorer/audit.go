package explorer

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	auditv1 "fris.dev/proto/audit/v1"
	authv1 "fris.dev/proto/auth/v1"
)

// The audit view: the audit events each service keeps in its store
// (pkg/audit), through its AuditAdmin API with the operator's identity
// (every service admits the gateway to ListEvents and GetSettings, for an
// operator's token; docs/security.md). The services' pages are merged by
// time here: each service lists its newest events after where the last
// page left it, and a page with more to come is always full, so the
// newest auditPerPage of all of them are the newest of the whole trail.
// The page link carries each service's place (auditCursor).
const AuditPath = OperatorPath + "audit"

// auditPerPage is the view's page size, and each service's.
const auditPerPage = 50

// AuditService is one service's AuditAdmin API for the audit and settings
// views.
type AuditService struct {
	Name   string
	Client auditv1.AuditAdminClient
}

func (a *App) auditRoutes() []route {
	return []route{{pattern: "GET " + AuditPath, access: operator, page: a.audit}}
}

// auditFilter is what the view's form asks.
type auditFilter struct {
	Service, Actor, Action, Outcome, Class string
	// From and To are the form's values (UTC, minutes).
	From, To string
	since    time.Time
	until    time.Time
}

// request is the services' ListEvents for f, as actor (auditActor), after
// token.
func (f auditFilter) request(actor, token string) *auditv1.ListEventsRequest {
	r := &auditv1.ListEventsRequest{Actor: actor, ActionPrefix: f.Action, PageSize: auditPerPage, PageToken: token}
	switch f.Outcome {
	case "ok":
		r.Outcome = auditv1.Outcome_OUTCOME_OK
	case "denied":
		r.Outcome = auditv1.Outcome_OUTCOME_DENIED
	case "failed":
		r.Outcome = auditv1.Outcome_OUTCOME_FAILED
	}
	r.Class = auditClasses[f.Class]
	if !f.since.IsZero() {
		r.Since = timestamppb.New(f.since)
	}
	if !f.until.IsZero() {
		r.Until = timestamppb.New(f.until)
	}
	return r
}

// auditClasses are the classes the view filters by (pkg/audit): who
// acted decides how long an event is kept; a stranger's refusals are
// counts.
var auditClasses = map[string]auditv1.Class{
	"admin": auditv1.Class_CLASS_ADMIN, "signed-in": auditv1.Class_CLASS_SIGNED_IN, "anonymous": auditv1.Class_CLASS_ANONYMOUS,
}

// auditClassOrder is the classes in the form's order.
var auditClassOrder = []string{"admin", "signed-in", "anonymous"}

func className(c auditv1.Class) string {
	for name, v := range auditClasses {
		if v == c {
			return name
		}
	}
	return ""
}

// dateForm is the datetime-local inputs' format.
const dateForm = "2006-01-02T15:04"

// readAuditFilter reads and bounds the query; false when a value is
// malformed.
func (a *App) readAuditFilter(q url.Values) (auditFilter, bool) {
	f := auditFilter{Service: q.Get("service"), Actor: strings.TrimSpace(q.Get("actor")), Action: strings.TrimSpace(q.Get("action")),
		Outcome: q.Get("outcome"), Class: q.Get("class"), From: q.Get("from"), To: q.Get("to")}
	if len(f.Actor) > 254 || len(f.Action) > 128 {
		return f, false
	}
	if f.Service != "" && a.auditService(f.Service) == nil {
		return f, false
	}
	switch f.Outcome {
	case "", "ok", "denied", "failed":
	default:
		return f, false
	}
	if _, ok := auditClasses[f.Class]; f.Class != "" && !ok {
		return f, false
	}
	var ok bool
	if f.From != "" {
		if f.since, _, ok = parseFormTime(f.From); !ok {
			return f, false
		}
	}
	if f.To != "" {
		var step time.Duration
		if f.until, step, ok = parseFormTime(f.To); !ok {
			return f, false
		}
		// The minute (or second) named is included.
		f.until = f.until.Add(step - time.Nanosecond)
	}
	return f, true
}

// parseFormTime reads a datetime-local value, UTC, to the minute or (as
// some browsers send it) the second, and says which.
func parseFormTime(s string) (time.Time, time.Duration, bool) {
	if t, err := time.Parse(dateForm, s); err == nil {
		return t, time.Minute, true
	}
	if t, err := time.Parse(dateForm+":05", s); err == nil {
		return t, time.Second, true
	}
	return time.Time{}, 0, false
}

func (a *App) auditService(name string) *AuditService {
	for i := range a.cfg.Audit {
		if a.cfg.Audit[i].Name == name {
			return &a.cfg.Audit[i]
		}
	}
	return nil
}

// auditCursor is where each service's listing continues: after an event's
// id, or done ("-"); a service it does not name starts at its newest.
type auditCursor map[string]string

// doneMark is a service whose events were all listed.
const doneMark = "-"

// eventID is the form of the services' event ids (pkg/audit).
var eventID = regexp.MustCompile(`^[0-9a-f]{16}-[0-9a-f]{16}$`)

// parseAuditCursor reads a page link's cursor, "svc:id,svc:-"; false when
// it names an unknown service, one twice, or a malformed id.
func parseAuditCursor(s string, known func(string) bool) (auditCursor, bool) {
	c := auditCursor{}
	if s == "" {
		return c, true
	}
	if len(s) > 512 {
		return nil, false
	}
	for _, part := range strings.Split(s, ",") {
		name, id, ok := strings.Cut(part, ":")
		if _, dup := c[name]; !ok || dup || !known(name) || (id != doneMark && !eventID.MatchString(id)) {
			return nil, false
		}
		c[name] = id
	}
	return c, true
}

// String is the cursor as a page link carries it, services in order.
func (c auditCursor) String(order []string) string {
	var parts []string
	for _, n := range order {
		if id, ok := c[n]; ok {
			parts = append(parts, n+":"+id)
		}
	}
	return strings.Join(parts, ",")
}

// servicePage is one service's answer for a page.
type servicePage struct {
	service string
	events  []*auditv1.AuditEvent
	more    bool
	err     error
}

// mergePages takes the newest n events of pages, by time (then service,
// then the service's own order), and the cursor after them; more tells
// whether a service has events left.
func mergePages(pages []servicePage, c auditCursor, n int) (out []*auditv1.AuditEvent, next auditCursor, more bool) {
	next = auditCursor{}
	for k, v := range c {
		next[k] = v
	}
	type item struct {
		ev  *auditv1.AuditEvent
		svc int
		pos int
	}
	var all []item
	for i, p := range pages {
		if p.err != nil {
			continue
		}
		for j, ev := range p.events {
			all = append(all, item{ev, i, j})
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		ti, tj := all[i].ev.GetTime().AsTime(), all[j].ev.GetTime().AsTime()
		if !ti.Equal(tj) {
			return ti.After(tj)
		}
		if all[i].svc != all[j].svc {
			return all[i].svc < all[j].svc
		}
		return all[i].pos < all[j].pos
	})
	if len(all) > n {
		all = all[:n]
	}
	taken := make([]int, len(pages))
	for _, it := range all {
		out = append(out, it.ev)
		taken[it.svc]++
		next[pages[it.svc].service] = it.ev.GetId()
	}
	for i, p := range pages {
		switch {
		case p.err != nil:
			more = true // its place is kept for the next page
		case taken[i] == len(p.events) && !p.more:
			next[p.service] = doneMark
		default:
			more = true
		}
	}
	return out, next, more
}

// auditLine is an event as the view shows it.
type auditLine struct {
	Service, Action, Actor, ActorEmail, Client, Target string
	Outcome, Reason, ClientAddr, RequestID, Class      string
	When                                               when
	Attrs                                              []*auditv1.Attr
	// Count is how many events the line stands for: anonymous refusals
	// are folded per action, outcome, address and minute (pkg/audit).
	Count int64
}

type auditData struct {
	Filter       auditFilter
	Classes      []string
	Services     []string
	ServicesText string
	Outcomes     []string
	Events       []auditLine
	// Failed are the services that did not answer, with the reason.
	Failed []string
	// First is the first page's link when this is a later one; Next the
	// next page's.
	First, Next string
	Invalid     bool
}

func (a *App) audit(q *req) error {
	v := a.opView(q, "op.audit.title", "audit")
	d := auditData{Outcomes: []string{"ok", "denied", "failed"}, Classes: auditClassOrder}
	for _, s := range a.cfg.Audit {
		d.Services = append(d.Services, s.Name)
	}
	d.ServicesText = strings.Join(d.Services, ", ")
	if len(a.cfg.Audit) == 0 {
		return fail(http.StatusServiceUnavailable, "op.audit.error.none")
	}
	query := q.r.URL.Query()
	f, ok := a.readAuditFilter(query)
	d.Filter = f
	known := func(n string) bool { return a.auditService(n) != nil }
	cur, curOK := parseAuditCursor(query.Get("page"), known)
	if !ok || !curOK {
		d.Invalid = true
		v.Data = d
		a.render(q, http.StatusBadRequest, "operator-audit", v)
		return nil
	}
	actor := a.auditActor(q.ctx, f.Actor)
	var asked []AuditService
	for _, s := range a.cfg.Audit {
		if (f.Service == "" || f.Service == s.Name) && cur[s.Name] != doneMark {
			asked = append(asked, s)
		}
	}
	pages := make([]servicePage, len(asked))
	var wg sync.WaitGroup
	for i, s := range asked {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.Client.ListEvents(q.ctx, f.request(actor, cur[s.Name]))
			pages[i] = servicePage{service: s.Name, events: res.GetEvents(), more: res.GetNextPageToken() != "", err: err}
		}()
	}
	wg.Wait()
	events, next, more := mergePages(pages, cur, auditPerPage)
	for _, p := range pages {
		if p.err != nil {
			a.cfg.Log.WarnContext(q.ctx, "explorer: audit events", "service", p.service, "err", p.err)
			d.Failed = append(d.Failed, p.service+": "+status.Convert(p.err).Message())
		}
	}
	emails := a.actorEmails(q.ctx, events)
	for _, ev := range events {
		d.Events = append(d.Events, auditLine{Service: ev.GetService(), Action: ev.GetAction(), Actor: ev.GetActor(), ActorEmail: emails[ev.GetActor()],
			Client: ev.GetClient(), Target: ev.GetTarget(), Outcome: outcomeName(ev.GetOutcome()), Reason: ev.GetReason(),
			ClientAddr: ev.GetClientAddr(), RequestID: ev.GetRequestId(), When: a.when(ev.GetTime()), Attrs: ev.GetAttrs(),
			Class: className(ev.GetClass()), Count: max(ev.GetCount(), 1)})
	}
	link := func(c string) string {
		p := url.Values{}
		for k, val := range map[string]string{"service": f.Service, "actor": f.Actor, "action": f.Action, "outcome": f.Outcome, "class": f.Class, "from": f.From, "to": f.To, "page": c} {
			if val != "" {
				p.Set(k, val)
			}
		}
		if len(p) == 0 {
			return AuditPath
		}
		return AuditPath + "?" + p.Encode()
	}
	if len(cur) > 0 {
		d.First = link("")
	}
	if more {
		d.Next = link(next.String(d.Services))
	}
	v.Data = d
	a.render(q, http.StatusOK, "operator-audit", v)
	return nil
}

func outcomeName(o auditv1.Outcome) string {
	switch o {
	case auditv1.Outcome_OUTCOME_OK:
		return "ok"
	case auditv1.Outcome_OUTCOME_DENIED:
		return "denied"
	}
	return "failed"
}

// auditActor is the actor filter as the services record it: a user's id
// for an email the identity provider knows (events name users by their
// subject), else as typed.
func (a *App) auditActor(ctx context.Context, typed string) string {
	if !strings.Contains(typed, "@") || a.cfg.Users == nil {
		return typed
	}
	res, err := a.cfg.Users.ListUsers(ctx, &authv1.ListUsersRequest{})
	if err != nil {
		return typed
	}
	for _, u := range res.GetUsers() {
		if strings.EqualFold(u.GetEmail(), typed) {
			return strconv.Itoa(int(u.GetId()))
		}
	}
	return typed
}

// actorEmails names the users among the events' actors (subjects are user
// ids); none when the identity provider cannot say.
func (a *App) actorEmails(ctx context.Context, events []*auditv1.AuditEvent) map[string]string {
	out := map[string]string{}
	need := false
	for _, ev := range events {
		if _, err := strconv.Atoi(ev.GetActor()); err == nil {
			need = true
		}
	}
	if !need || a.cfg.Users == nil {
		return out
	}
	res, err := a.cfg.Users.ListUsers(ctx, &authv1.ListUsersRequest{})
	if err != nil {
		return out
	}
	for _, u := range res.GetUsers() {
		out[strconv.Itoa(int(u.GetId()))] = u.GetEmail()
	}
	return out
}
