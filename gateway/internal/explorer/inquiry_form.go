package explorer

import (
	"bytes"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"fris.dev/gateway/internal/explorer/querybuild"
	"fris.dev/gateway/internal/i18n"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	brokerv1 "fris.dev/proto/broker/v1"
	mdrv1 "fris.dev/proto/mdr/v1"
)

// The inquiry form, shared by creating and editing: shown with its
// builder, and read back with what the Explorer can check itself.

// inquiryForm is the form that creates and edits an inquiry.
type inquiryForm struct {
	ID, Action                                      string
	Label, Description                              string
	Title, First, Last, Email, Phone, Org           string
	Sites                                           []siteChoice
	Expires                                         string
	Expose                                          *brokerv1.ExposeInfo
	B                                               *querybuild.Builder
	Namespaces                                      []nsItem
	NS                                              string
	Errors                                          []string
	BadLabel, BadLast, BadSites, BadExpiry, BadFile bool
	BadDescription                                  bool
	// FileLost: a file was chosen, but the form comes back (a browser
	// cannot be given a file to send again).
	FileLost  bool
	MaxUpload string
	// Words is the builder's query in words.
	Words words
	// Cat is the criteria catalogue of namespace NS.
	Cat *catalogue
}

type siteChoice struct {
	ID, Name string
	Checked  bool
	// Active: an approved bank reads what targets the site.
	Active bool
	// Unknown: chosen, but not in the broker's site registry.
	Unknown bool
}

// targetSites are the sites of the broker's registry by their names in the
// page's language, those chosen checked; a chosen site the registry does
// not hold stays in the list, marked, and is returned in unknown.
func (a *App) targetSites(q *req, chosen []string) (out []siteChoice, unknown []string, err error) {
	b, err := a.broker()
	if err != nil {
		return nil, nil, err
	}
	res, err := b.ListSites(q.ctx, &brokerv1.ListSitesRequest{})
	if err != nil {
		return nil, nil, err
	}
	sites := res.GetSites()
	if len(sites) == 0 {
		// A broker of the previous release names ids only.
		for _, id := range res.GetSiteIds() {
			sites = append(sites, &brokerv1.Site{Id: id, HasActiveBank: true})
		}
	}
	known := map[string]bool{}
	for _, site := range sites {
		known[site.GetId()] = true
		out = append(out, siteChoice{ID: site.GetId(), Name: siteName(site, q.lang), Checked: slices.Contains(chosen, site.GetId()), Active: site.GetHasActiveBank()})
	}
	for _, c := range chosen {
		if !known[c] {
			known[c] = true
			unknown = append(unknown, c)
			out = append(out, siteChoice{ID: c, Name: c, Checked: true, Unknown: true})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name) })
	return out, unknown, nil
}

// siteName is a site's display name in the language l, else the other's,
// else its id.
func siteName(site *brokerv1.Site, l i18n.Lang) string {
	de, en := site.GetNameDe(), site.GetNameEn()
	if l == i18n.German && de != "" || en == "" && de != "" {
		return de
	}
	if en != "" {
		return en
	}
	return site.GetId()
}

// formPage renders the inquiry form, its builder's conditions described.
func (a *App) formPage(q *req, f *inquiryForm, code int) error {
	if f.Namespaces == nil {
		res, err := a.cfg.MDR.ListNamespaces(q.ctx, &mdrv1.ListNamespacesRequest{})
		if err != nil {
			return err
		}
		for _, n := range res.GetNamespaces() {
			f.Namespaces = append(f.Namespaces, nsItem{Name: n.GetName(), Label: pick(n.GetDesignations(), q.lang)})
		}
	}
	if f.NS == "" && len(f.Namespaces) > 0 {
		f.NS = f.Namespaces[0].Name
	}
	if f.B == nil {
		f.B = &querybuild.Builder{Op: "And"}
	}
	if len(f.B.Groups) == 0 {
		f.B.Groups = []*querybuild.Group{{ID: querybuild.NewID(), Op: "And"}}
	}
	if err := a.lookup(q, f.B); err != nil {
		return err
	}
	f.MaxUpload = sizeText(a.cfg.MaxUpload)
	if f.NS != "" {
		cat, err := a.catalogueOf(q, f.NS)
		if err != nil {
			return err
		}
		f.Cat = cat
	}
	v := a.view(q, "inq.new")
	if f.ID != "" {
		v.Title = v.T("inq.edit")
		v.Crumbs = []crumb{{v.T("inq.title"), InquiriesPath}, {f.Label, inquiryHref(f.ID)}, {v.Title, ""}}
	} else {
		v.Crumbs = []crumb{{v.T("inq.title"), InquiriesPath}, {v.Title, ""}}
	}
	v.Section = "inquiries"
	attach(f.B, v)
	if f.Cat != nil {
		f.Cat.attach(v)
	}
	f.Words = a.builderWords(q, v, f.B)
	v.Data = f
	a.render(q, code, "inquiry-form", v)
	return nil
}

// attach gives the builder's parts the page's view, for their texts.
func attach(b *querybuild.Builder, v *view) {
	for _, g := range b.Groups {
		g.V = v
		for _, c := range g.Conds {
			c.V, c.G = v, g.ID
		}
	}
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}

// formOf fills an inquiryForm from a posted form, and checks what the
// Explorer can check itself (the broker checks it all again).
func (a *App) formOf(q *req, v *view, form url.Values, pdf []byte) (*inquiryForm, *brokerv1.InquiryContent, error) {
	f := &inquiryForm{Label: strings.TrimSpace(form.Get("label")), Description: strings.TrimSpace(form.Get("description")),
		Title: strings.TrimSpace(form.Get("title")), First: strings.TrimSpace(form.Get("firstname")), Last: strings.TrimSpace(form.Get("lastname")),
		Email: strings.TrimSpace(form.Get("email")), Phone: strings.TrimSpace(form.Get("phone")), Org: strings.TrimSpace(form.Get("organization")),
		Expires: strings.TrimSpace(form.Get("expires")), NS: form.Get("qb.ns")}
	b, err := querybuild.Parse(form)
	if err != nil {
		return nil, nil, fail(http.StatusBadRequest, "error.badrequest")
	}
	f.B = b
	// A chip's remove button sends the form to take its condition out;
	// the form comes back (removing), nothing is saved.
	if id := form.Get("qb.remove"); querybuild.ValidID(id) {
		b.Remove(id)
	}
	if catAdding(form) {
		if err := catAdd(form, b); err != nil {
			return nil, nil, err
		}
	}
	chosen := form["site"]
	if len(chosen) > maxListedSites {
		return nil, nil, fail(http.StatusBadRequest, "error.badrequest")
	}
	var unknown []string
	if f.Sites, unknown, err = a.targetSites(q, chosen); err != nil {
		return nil, nil, err
	}
	if f.Label == "" {
		f.BadLabel = true
		f.Errors = append(f.Errors, v.T("inq.err.label"))
	}
	if f.Last == "" {
		f.BadLast = true
		f.Errors = append(f.Errors, v.T("inq.err.lastname"))
	}
	checkLengths(v, f)
	if len(chosen) == 0 {
		f.BadSites = true
		f.Errors = append(f.Errors, v.T("inq.err.sites"))
	}
	if len(unknown) > 0 {
		// Checked here too, so the form marks the field; the broker refuses
		// them all the same.
		f.BadSites = true
		f.Errors = append(f.Errors, v.T("inq.err.unknownsite", strings.Join(unknown, ", ")))
	}
	c := &brokerv1.InquiryContent{Label: f.Label, Description: f.Description, TargetSites: chosen,
		Contact: &brokerv1.Contact{Title: f.Title, Firstname: f.First, Lastname: f.Last, Email: f.Email, Phone: f.Phone, Organization: f.Org}}
	if f.Expires != "" {
		d, err := time.Parse("2006-01-02", f.Expires)
		// The inquiry expires at the end of the day chosen (UTC).
		end := d.Add(24*time.Hour - time.Second)
		if err != nil || !end.After(a.cfg.Now()) {
			f.BadExpiry = true
			f.Errors = append(f.Errors, v.T("inq.err.expiry"))
		} else {
			c.ExpiresAt = timestamppb.New(end)
		}
	}
	if pdf != nil {
		f.FileLost = true
		if !bytes.HasPrefix(pdf, []byte("%PDF-")) {
			f.BadFile = true
			f.Errors = append(f.Errors, v.T("inq.err.pdf"))
		}
		c.ExposePdf = pdf
	}
	if err := a.lookup(q, b); err != nil {
		return nil, nil, err
	}
	if !a.checkBuilder(q, b) {
		f.Errors = append(f.Errors, v.T("qb.err.summary"))
	}
	c.Query = b.Query()
	return f, c, nil
}

// maxListedSites bounds the sites one form names (the broker's own limit).
const maxListedSites = 1000

// refused turns the broker's InvalidArgument into a line of the form's
// error summary (the broker says what is wrong, in English); other
// errors stay errors.
func refused(v *view, f *inquiryForm, err error) error {
	st, _ := status.FromError(err)
	switch st.Code() {
	case codes.InvalidArgument:
		f.Errors = append(f.Errors, v.T("inq.err.refused", st.Message()))
		return nil
	case codes.ResourceExhausted:
		f.BadFile = true
		f.Errors = append(f.Errors, v.T("inq.err.refused", st.Message()))
		return nil
	}
	return err
}
