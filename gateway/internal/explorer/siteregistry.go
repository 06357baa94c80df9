package explorer

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	brokerv1 "fris.dev/proto/broker/v1"
)

// The site registry view: the broker's sites (what banks, upload
// credentials and inquiries name) for operators to add and rename, through
// the broker's admin API with the operator's identity (the broker admits
// the gateway to ListSites, CreateSite and UpdateSite for an operator's
// token, audits each change with the operator as its actor, and checks
// every field: docs/security.md). The form's values are the broker's to
// judge; a refusal is shown on the page beside the field it names, with
// the values kept. Sites are not deleted (docs/decisions.md, "The broker
// owns the site registry").
const (
	SiteRegistryPath = OperatorPath + "site-registry"
	SiteCreatePath   = SiteRegistryPath + "/create"
	SiteUpdatePath   = SiteRegistryPath + "/update"
)

// maxSiteForm bounds a site form: five short fields, each bounded again by
// the broker (names and contact 200 bytes, the logo URL 2000).
const maxSiteForm = 16 << 10

// siteFields are the form's fields, as the broker's messages name them.
var siteFields = []string{"id", "name_de", "name_en", "contact", "logo_url"}

// siteForm is one site's form: as listed, or as sent when refused.
type siteForm struct {
	// Stem is the element id stem of the form's fields ("new", "site-3").
	Stem                                 string
	ID, NameDE, NameEN, Contact, LogoURL string
	HasActiveBank                        bool
	LastReply, Created                   when
	// Error is the broker's reason for refusing this form, Bad the fields
	// it names; the form is shown open with them marked.
	Error string
	Bad   map[string]bool
}

// Invalid tells whether the refusal names field.
func (f siteForm) Invalid(field string) bool { return f.Bad[field] }

type siteRegistryData struct {
	Sites []siteForm
	New   siteForm
	// Done says what the last action did (created, updated), for the status
	// line; DoneKind which action it was.
	Done, DoneKind string
}

func (a *App) siteRegistryRoutes() []route {
	return []route{
		{pattern: "GET " + SiteRegistryPath, access: operator, page: a.siteRegistry},
		{pattern: "POST " + SiteCreatePath, access: operator, page: a.siteAction(true)},
		{pattern: "POST " + SiteUpdatePath, access: operator, page: a.siteAction(false)},
	}
}

// siteList reads the registry as forms, sorted by id (the broker's order).
func (a *App) siteList(q *req) (siteRegistryData, error) {
	if a.cfg.Banks == nil {
		return siteRegistryData{}, fail(http.StatusServiceUnavailable, "op.error.nobroker")
	}
	res, err := a.cfg.Banks.ListSites(q.ctx, &brokerv1.ListSitesRequest{})
	if err != nil {
		return siteRegistryData{}, err
	}
	d := siteRegistryData{New: siteForm{Stem: "new"}}
	for i, s := range res.GetSites() {
		d.Sites = append(d.Sites, siteForm{Stem: "site-" + strconv.Itoa(i), ID: s.GetId(), NameDE: s.GetNameDe(), NameEN: s.GetNameEn(),
			Contact: s.GetContact(), LogoURL: s.GetLogoUrl(), HasActiveBank: s.GetHasActiveBank(),
			LastReply: a.when(s.GetLastReplyAt()), Created: a.when(s.GetCreatedAt())})
	}
	return d, nil
}

func (a *App) siteRegistry(q *req) error {
	d, err := a.siteList(q)
	if err != nil {
		return err
	}
	v := a.opView(q, "op.siteregistry.title", "siteregistry")
	// The status line of the action just done, only for a site the list
	// holds: the link's parameters are anyone's to write.
	id, done := q.r.URL.Query().Get("site"), q.r.URL.Query().Get("done")
	for _, s := range d.Sites {
		if id != "" && s.ID == id && (done == "created" || done == "updated") {
			d.Done, d.DoneKind = v.T("op.siteregistry.done."+done, s.ID), done
		}
	}
	v.Data = d
	a.render(q, http.StatusOK, "operator-siteregistry", v)
	return nil
}

// siteAction creates (create) or updates a site: a form of the view, same
// origin and with the session's CSRF token, then back to the view; a
// refusal shows the view again with the form as sent and the reason.
func (a *App) siteAction(create bool) func(*req) error {
	return func(q *req) error {
		if !sameOrigin(q.r) {
			return fail(http.StatusForbidden, "error.crosssite")
		}
		q.r.Body = http.MaxBytesReader(q.w, q.r.Body, maxSiteForm)
		if err := q.r.ParseForm(); err != nil {
			return formError(err)
		}
		if subtle.ConstantTimeCompare([]byte(q.r.PostForm.Get(CSRFField)), []byte(q.sess.CSRF)) != 1 {
			return fail(http.StatusForbidden, "error.csrf")
		}
		if a.cfg.Banks == nil {
			return fail(http.StatusServiceUnavailable, "op.error.nobroker")
		}
		f := q.r.PostForm
		sent := siteForm{ID: strings.TrimSpace(f.Get("id")), NameDE: f.Get("name_de"), NameEN: f.Get("name_en"), Contact: f.Get("contact"), LogoURL: f.Get("logo_url")}
		var err error
		done := "updated"
		if create {
			done = "created"
			_, err = a.cfg.Banks.CreateSite(q.ctx, &brokerv1.CreateSiteRequest{Id: sent.ID, NameDe: sent.NameDE, NameEn: sent.NameEN, Contact: sent.Contact, LogoUrl: sent.LogoURL})
		} else {
			// Every field is sent: an emptied contact or logo clears it.
			_, err = a.cfg.Banks.UpdateSite(q.ctx, &brokerv1.UpdateSiteRequest{Id: sent.ID, NameDe: &sent.NameDE, NameEn: &sent.NameEN, Contact: &sent.Contact, LogoUrl: &sent.LogoURL})
		}
		if err != nil {
			return a.siteRefused(q, create, sent, err)
		}
		http.Redirect(q.w, q.r, SiteRegistryPath+"?"+url.Values{"done": {done}, "site": {sent.ID}}.Encode(), http.StatusSeeOther)
		return nil
	}
}

// siteRefused shows the view again with the refused form open, its values
// as sent and the broker's reason beside the fields it names: 400 for a
// value the broker does not take, 409 for an id taken, 404 for a site gone.
// Other failures are shown as every page shows them.
func (a *App) siteRefused(q *req, create bool, sent siteForm, err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	code := http.StatusBadRequest
	switch st.Code() {
	case codes.InvalidArgument:
	case codes.AlreadyExists:
		code = http.StatusConflict
	case codes.NotFound:
		if !create {
			return fail(http.StatusNotFound, "op.error.refused", st.Message())
		}
	default:
		return err
	}
	d, lerr := a.siteList(q)
	if lerr != nil {
		return lerr
	}
	sent.Error, sent.Bad = st.Message(), siteErrorFields(st.Message())
	if st.Code() == codes.AlreadyExists {
		sent.Bad = map[string]bool{"id": true}
	}
	if create {
		sent.Stem = "new"
		d.New = sent
	} else {
		for i := range d.Sites {
			if d.Sites[i].ID == sent.ID {
				s := &d.Sites[i]
				s.NameDE, s.NameEN, s.Contact, s.LogoURL, s.Error, s.Bad = sent.NameDE, sent.NameEN, sent.Contact, sent.LogoURL, sent.Error, sent.Bad
			}
		}
	}
	v := a.opView(q, "op.siteregistry.title", "siteregistry")
	v.Data = d
	a.render(q, code, "operator-siteregistry", v)
	return nil
}

// siteErrorFields are the fields the broker's reason names: each of its
// lines starts with one ("logo_url ... must be", "contact must be", "site id
// ... must be", "name_de or name_en is required").
func siteErrorFields(msg string) map[string]bool {
	bad := map[string]bool{}
	for _, line := range strings.Split(msg, "\n") {
		switch {
		case strings.HasPrefix(line, "site id"):
			bad["id"] = true
		case strings.HasPrefix(line, "name_de or name_en is required"):
			bad["name_de"], bad["name_en"] = true, true
		case strings.HasPrefix(line, "name_de"):
			bad["name_de"] = true
		default:
			for _, f := range siteFields {
				if strings.HasPrefix(line, f+" ") {
					bad[f] = true
				}
			}
		}
	}
	return bad
}

// siteFormView is a site's form with the page around it, for the template
// of the form's fields.
type siteFormView struct {
	Form siteForm
	View *view
}

// SiteForm pairs f with the page, for the "site-fields" template.
func (v *view) SiteForm(f siteForm) siteFormView { return siteFormView{Form: f, View: v} }
