package explorer

import (
	"crypto/subtle"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	brokerv1 "fris.dev/proto/broker/v1"
	mdrv1 "fris.dev/proto/mdr/v1"
	uploadv1 "fris.dev/proto/upload/v1"
)

// The operator views: for users whose token grants identity.ScopeOperator.
// The pages call the services' admin APIs with the operator's identity; the
// services admit the gateway to exactly these RPCs and check the scope
// themselves (docs/security.md, "Service-to-service trust"), so the check
// here only spares a call and explains the refusal.
const (
	OperatorPath   = Prefix + "/operator/"
	BanksPath      = OperatorPath + "banks"
	ApprovePath    = BanksPath + "/approve"
	LinkPath       = BanksPath + "/link"
	DeletePath     = BanksPath + "/delete"
	SitesPath      = OperatorPath + "sites"
	MonitoringPath = OperatorPath + "monitoring"
	RegistryPath   = OperatorPath + "registry"
)

// DefaultStaleAfter is how long a teiler may go without an upload before
// the sites view highlights it.
const DefaultStaleAfter = 7 * 24 * time.Hour

// operatorRoutes are the operator views' paths: all for operators.
func (a *App) operatorRoutes() []route {
	return append([]route{
		{pattern: "GET " + OperatorPath + "{$}", access: userAdmin, page: a.operatorHome},
		{pattern: "GET " + BanksPath, access: operator, page: a.banks},
		{pattern: "POST " + ApprovePath, access: operator, page: a.bankAction(actApprove)},
		{pattern: "POST " + LinkPath, access: operator, page: a.bankAction(actLink)},
		{pattern: "POST " + DeletePath, access: operator, page: a.bankAction(actDelete)},
		{pattern: "GET " + SitesPath, access: operator, page: a.sites},
		{pattern: "GET " + MonitoringPath, access: operator, page: a.monitoring},
		{pattern: "GET " + RegistryPath, access: operator, page: a.registryStatus},
	}, a.siteRegistryRoutes()...)
}

// opView is a view of the operator section with its tabs.
func (a *App) opView(q *req, titleKey, tab string) *view {
	v := a.view(q, titleKey)
	v.Section = "operator"
	v.Tab = tab
	v.Crumbs = []crumb{{v.T("op.title"), OperatorPath}, {v.Title, ""}}
	return v
}

// operatorHome is the first view the visitor may use: a user
// administrator has only the users view.
func (a *App) operatorHome(q *req) error {
	to := BanksPath
	if !q.isOperator() {
		to = UsersPath
	}
	http.Redirect(q.w, q.r, to, http.StatusFound)
	return nil
}

// when is a moment shown on a page: the time in UTC, machine-readable,
// and how long ago in words.
type when struct {
	Set      bool
	ISO      string
	Text     string
	AgoKey   string
	AgoCount int64
}

func (a *App) when(ts *timestamppb.Timestamp) when {
	if ts == nil || !ts.IsValid() || ts.AsTime().Unix() <= 0 {
		return when{}
	}
	t := ts.AsTime().UTC()
	w := when{Set: true, ISO: t.Format(time.RFC3339), Text: t.Format("2006-01-02 15:04 UTC")}
	d := a.cfg.Now().Sub(t)
	switch {
	case d < time.Minute:
		w.AgoKey = "op.ago.now"
	case d < time.Hour:
		w.AgoKey, w.AgoCount = "op.ago.minutes", int64(d/time.Minute)
	case d < 48*time.Hour:
		w.AgoKey, w.AgoCount = "op.ago.hours", int64(d/time.Hour)
	default:
		w.AgoKey, w.AgoCount = "op.ago.days", int64(d/(24*time.Hour))
	}
	return w
}

// Ago is w's age in the page's language.
func (v *view) Ago(w when) string {
	if !w.Set {
		return ""
	}
	if w.AgoKey == "op.ago.now" {
		return v.T(w.AgoKey)
	}
	return v.T(w.AgoKey, w.AgoCount)
}

// When renders a moment: the time, machine-readable, and its age; "never"
// when unset.
func (v *view) When(w when) template.HTML {
	if !w.Set {
		return template.HTML(`<span class="muted">` + template.HTMLEscapeString(v.T("op.never")) + `</span>`)
	}
	return template.HTML(`<time datetime="` + template.HTMLEscapeString(w.ISO) + `">` + template.HTMLEscapeString(w.Text) +
		`</time> <span class="muted">(` + template.HTMLEscapeString(v.Ago(w)) + `)</span>`)
}

// bankLine is a bank as the banks view lists it.
type bankLine struct {
	Email        string
	ID           string // the element id stem of its forms
	Active       bool
	SiteID       string
	ReportedSite string
	Registered   when
	Approved     when
}

// siteOption is a site an operator may link a bank to.
type siteOption struct{ ID, Name string }

type banksData struct {
	Pending []bankLine
	Active  []bankLine
	// Sites are the site registry's sites (from a broker of the previous
	// release: the ids of linked banks and uploading teilers), offered as
	// suggestions.
	Sites []siteOption
	// Done says what the last action did, for the status line; DoneKind
	// which action it was (approved, linked, deleted).
	Done, DoneKind string
}

func (a *App) banks(q *req) error {
	if a.cfg.Banks == nil {
		return fail(http.StatusServiceUnavailable, "op.error.nobroker")
	}
	res, err := a.cfg.Banks.ListBanks(q.ctx, &brokerv1.ListBanksRequest{})
	if err != nil {
		return err
	}
	sites := map[string]bool{}
	var d banksData
	for i, b := range res.GetBanks() {
		l := bankLine{Email: b.GetEmail(), ID: "bank-" + strconv.Itoa(i), Active: b.GetStatus() == brokerv1.BankStatus_ACTIVE,
			SiteID: b.GetSiteId(), ReportedSite: b.GetReportedSite(), Registered: a.when(b.GetRegisteredAt()), Approved: a.when(b.GetApprovedAt())}
		if l.SiteID != "" {
			sites[l.SiteID] = true
		}
		if l.Active {
			d.Active = append(d.Active, l)
		} else {
			d.Pending = append(d.Pending, l)
		}
	}
	// The registry's sites are the ones a bank may be linked to; the view
	// works without them.
	if rs, err := a.cfg.Banks.ListSites(q.ctx, &brokerv1.ListSitesRequest{}); err == nil && len(rs.GetSites()) > 0 {
		for _, site := range rs.GetSites() {
			d.Sites = append(d.Sites, siteOption{ID: site.GetId(), Name: siteName(site, q.lang)})
		}
		sites = nil
	} else if a.cfg.Uploads != nil {
		if ts, err := a.cfg.Uploads.ListTeilers(q.ctx, &uploadv1.ListTeilersRequest{NamesOnly: true}); err == nil {
			for _, t := range ts.GetTeilers() {
				sites[t.GetTeiler().GetSiteId()] = true
			}
		}
	}
	for s := range sites {
		d.Sites = append(d.Sites, siteOption{ID: s, Name: s})
	}
	sort.Slice(d.Sites, func(i, j int) bool { return d.Sites[i].ID < d.Sites[j].ID })
	v := a.opView(q, "op.banks.title", "banks")
	// The status line of the action just done, only where the list bears it
	// out: the link's parameters are anyone's to write.
	bank, done := q.r.URL.Query().Get("bank"), q.r.URL.Query().Get("done")
	listed, active := false, false
	for _, b := range res.GetBanks() {
		if strings.EqualFold(b.GetEmail(), bank) {
			listed, active = true, b.GetStatus() == brokerv1.BankStatus_ACTIVE
		}
	}
	if bank != "" && len(bank) <= 254 && ((done == "approved" || done == "linked") && active || done == "deleted" && !listed) {
		d.Done, d.DoneKind = v.T("op.banks.done."+done, bank), done
	}
	v.Data = d
	a.render(q, http.StatusOK, "operator-banks", v)
	return nil
}

type bankAct int

const (
	actApprove bankAct = iota
	actLink
	actDelete
)

// bankAction approves, links or deletes a bank: a form of the banks view,
// same origin and with the session's CSRF token, then back to the view.
func (a *App) bankAction(act bankAct) func(*req) error {
	return func(q *req) error {
		if !sameOrigin(q.r) {
			return fail(http.StatusForbidden, "error.crosssite")
		}
		q.r.Body = http.MaxBytesReader(q.w, q.r.Body, 8<<10)
		if err := q.r.ParseForm(); err != nil {
			return formError(err)
		}
		if subtle.ConstantTimeCompare([]byte(q.r.PostForm.Get(CSRFField)), []byte(q.sess.CSRF)) != 1 {
			return fail(http.StatusForbidden, "error.csrf")
		}
		if a.cfg.Banks == nil {
			return fail(http.StatusServiceUnavailable, "op.error.nobroker")
		}
		email := strings.TrimSpace(q.r.PostForm.Get("email"))
		site := strings.TrimSpace(q.r.PostForm.Get("site_id"))
		if email == "" || len(email) > 254 || len(site) > 128 || act != actDelete && site == "" {
			return fail(http.StatusBadRequest, "op.error.form")
		}
		var (
			err  error
			done string
		)
		switch act {
		case actApprove:
			_, err = a.cfg.Banks.ApproveBank(q.ctx, &brokerv1.ApproveBankRequest{Email: email, SiteId: site})
			done = "approved"
		case actLink:
			_, err = a.cfg.Banks.LinkBankSite(q.ctx, &brokerv1.LinkBankSiteRequest{Email: email, SiteId: site})
			done = "linked"
		case actDelete:
			_, err = a.cfg.Banks.DeleteBank(q.ctx, &brokerv1.AdminDeleteBankRequest{Email: email})
			done = "deleted"
		}
		if err != nil {
			return a.actionFailed(err)
		}
		http.Redirect(q.w, q.r, BanksPath+"?"+url.Values{"done": {done}, "bank": {email}}.Encode(), http.StatusSeeOther)
		return nil
	}
}

// actionFailed keeps the service's reason for a refused change (a site id
// it does not accept, a bank deleted meanwhile), which the operator can act
// on; other failures are shown as every page shows them.
func (a *App) actionFailed(err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	switch st.Code() {
	case codes.InvalidArgument, codes.FailedPrecondition:
		return fail(http.StatusBadRequest, "op.error.refused", st.Message())
	case codes.NotFound:
		return fail(http.StatusNotFound, "op.error.refused", st.Message())
	case codes.PermissionDenied:
		// A user administrator's call on a privileged user: auth's reason.
		return fail(http.StatusForbidden, "op.error.refused", st.Message())
	}
	return err
}

// teilerLine is one teiler of the sites view.
type teilerLine struct {
	SiteID, TeilerID string
	Banks            []string
	Patients         int32
	LastUpload       when
	LastStored       when
	Credentials      int32
	Disabled         int32
	// Stale: no upload (statistics or patient) within StaleAfter.
	Stale bool
}

type sitesData struct {
	Teilers    []teilerLine
	StaleCount int
	StaleAfter string
	// StaleText says how many are stale ("" when none).
	StaleText string
	// BanksOnly are sites that banks are linked to but no teiler uploads for.
	BanksOnly []string
}

func (a *App) sites(q *req) error {
	if a.cfg.Uploads == nil {
		return fail(http.StatusServiceUnavailable, "op.error.noupload")
	}
	res, err := a.cfg.Uploads.ListTeilers(q.ctx, &uploadv1.ListTeilersRequest{})
	if err != nil {
		return err
	}
	banksOf := map[string][]string{}
	if a.cfg.Banks != nil {
		if bs, err := a.cfg.Banks.ListBanks(q.ctx, &brokerv1.ListBanksRequest{}); err == nil {
			for _, b := range bs.GetBanks() {
				if b.GetSiteId() != "" && b.GetStatus() == brokerv1.BankStatus_ACTIVE {
					banksOf[b.GetSiteId()] = append(banksOf[b.GetSiteId()], b.GetEmail())
				}
			}
		}
	}
	v := a.opView(q, "op.sites.title", "sites")
	d := sitesData{StaleAfter: v.duration(a.cfg.StaleAfter)}
	now := a.cfg.Now()
	seen := map[string]bool{}
	for _, t := range res.GetTeilers() {
		site := t.GetTeiler().GetSiteId()
		l := teilerLine{SiteID: site, TeilerID: t.GetTeiler().GetTeilerId(), Banks: banksOf[site], Patients: t.GetPatients(),
			LastUpload: a.when(t.GetLastUpload()), LastStored: a.when(t.GetLastStored()), Credentials: t.GetCredentials(), Disabled: t.GetDisabled()}
		latest := time.Time{}
		for _, ts := range []*timestamppb.Timestamp{t.GetLastUpload(), t.GetLastStored()} {
			if ts != nil && ts.AsTime().After(latest) {
				latest = ts.AsTime()
			}
		}
		l.Stale = latest.IsZero() || now.Sub(latest) > a.cfg.StaleAfter
		if l.Stale {
			d.StaleCount++
		}
		seen[site] = true
		d.Teilers = append(d.Teilers, l)
	}
	for s := range banksOf {
		if !seen[s] {
			d.BanksOnly = append(d.BanksOnly, s)
		}
	}
	sort.Strings(d.BanksOnly)
	switch {
	case d.StaleCount == 1:
		d.StaleText = v.T("op.sites.stale.one", d.StaleAfter)
	case d.StaleCount > 1:
		d.StaleText = v.T("op.sites.stalecount", d.StaleCount, d.StaleAfter)
	}
	v.Data = d
	a.render(q, http.StatusOK, "operator-sites", v)
	return nil
}

// duration is d in days or hours, in the page's language.
func (v *view) duration(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return v.T("op.dur.days", int64(d/(24*time.Hour)))
	}
	if d%time.Hour == 0 {
		return v.T("op.dur.hours", int64(d/time.Hour))
	}
	return d.String()
}

type reportLine struct {
	Bank     string
	SiteID   string
	Received when
	Items    []*brokerv1.MonitoringItem
	// Failed: an item's exit status is not 0 (the connector's checks).
	Failed bool
}

func (a *App) monitoring(q *req) error {
	if a.cfg.Banks == nil {
		return fail(http.StatusServiceUnavailable, "op.error.nobroker")
	}
	res, err := a.cfg.Banks.ListMonitoring(q.ctx, &brokerv1.ListMonitoringRequest{})
	if err != nil {
		return err
	}
	var lines []reportLine
	for _, r := range res.GetReports() {
		l := reportLine{Bank: r.GetBankEmail(), SiteID: r.GetSiteId(), Received: a.when(r.GetReceivedAt()), Items: r.GetItems()}
		for _, it := range r.GetItems() {
			if s := strings.TrimSpace(it.GetExitStatus()); s != "" && s != "0" {
				l.Failed = true
			}
		}
		lines = append(lines, l)
	}
	v := a.opView(q, "op.monitoring.title", "monitoring")
	v.Data = lines
	a.render(q, http.StatusOK, "operator-monitoring", v)
	return nil
}

type registryData struct {
	Generation int64
	Changed    when
	Namespaces []*mdrv1.NamespaceInfo
	Elements   int32
}

func (a *App) registryStatus(q *req) error {
	if a.cfg.Registry == nil {
		return fail(http.StatusServiceUnavailable, "error.unavailable")
	}
	res, err := a.cfg.Registry.ListNamespaces(q.ctx, &mdrv1.AdminListNamespacesRequest{})
	if err != nil {
		return err
	}
	d := registryData{Generation: res.GetGeneration(), Changed: a.when(res.GetLastChange()), Namespaces: res.GetNamespaces()}
	for _, n := range d.Namespaces {
		d.Elements += n.GetElements()
	}
	v := a.opView(q, "op.registry.title", "registry")
	v.Data = d
	a.render(q, http.StatusOK, "operator-registry", v)
	return nil
}

// ParseAge reads a duration as -explorer-stale-after takes it: Go's units
// (72h, 90m) or whole days (7d).
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days <= 0 || days > 3650 {
			return 0, fmt.Errorf("%q: want a number of days from 1 to 3650, e.g. 7d", s)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q: want a positive duration such as 7d or 36h", s)
	}
	return d, nil
}
