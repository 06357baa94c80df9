package explorer

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"fris.dev/gateway/internal/explorer/querybuild"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	brokerv1 "fris.dev/proto/broker/v1"
	mdrv1 "fris.dev/proto/mdr/v1"
)

// The researcher's pages: the query builder, inquiries and their results
// (docs/interface.md, "Explorer"). They call the broker's ResearcherService
// with the signed-in user's identity, so the broker's own checks apply: a
// researcher sees only their own inquiries, and only with the
// broker:researcher scope.
const (
	InquiriesPath = Prefix + "/inquiries"
	QueryPath     = Prefix + "/query"
)

// inquiryRoutes are the researcher's pages, for signed-in users, and the
// query builder's fragments, public: they only look up the registry, as
// its own pages do.
func (a *App) inquiryRoutes() []route {
	return []route{
		{pattern: "GET " + InquiriesPath, access: signedIn, page: a.inquiries},
		{pattern: "GET " + InquiriesPath + "/new", access: signedIn, page: a.newInquiry},
		{pattern: "POST " + InquiriesPath, access: signedIn, page: a.createInquiry},
		{pattern: "GET " + InquiriesPath + "/{id}", access: signedIn, page: a.showInquiry},
		{pattern: "POST " + InquiriesPath + "/{id}", access: signedIn, page: a.updateInquiry},
		{pattern: "GET " + InquiriesPath + "/{id}/edit", access: signedIn, page: a.editInquiry},
		{pattern: "POST " + InquiriesPath + "/{id}/release", access: signedIn, page: a.releaseInquiry},
		{pattern: "POST " + InquiriesPath + "/{id}/close", access: signedIn, page: a.closeInquiry},
		{pattern: "GET " + InquiriesPath + "/{id}/events", access: signedIn, page: a.events},
		{pattern: "GET " + InquiriesPath + "/{id}/replies.csv", access: signedIn, page: a.repliesCSV},
		{pattern: "GET " + QueryPath + "/elements", access: public, page: a.qbElements},
		{pattern: "GET " + QueryPath + "/condition", access: public, page: a.qbCondition},
		{pattern: "GET " + QueryPath + "/group", access: public, page: a.qbGroup},
		{pattern: "GET " + QueryPath + "/preview", access: public, page: a.qbPreview},
	}
}

func inquiryHref(id string) string { return InquiriesPath + "/" + url.PathEscape(id) }

// broker is the researcher client, or a 503 page when the gateway has no
// broker.
func (a *App) broker() (brokerv1.ResearcherServiceClient, error) {
	if a.cfg.Broker == nil {
		return nil, fail(http.StatusServiceUnavailable, "error.unavailable")
	}
	return a.cfg.Broker, nil
}

// checkPost admits a state-changing request: from this site, with the
// session's CSRF token.
func (a *App) checkPost(q *req, form url.Values) error {
	if !sameOrigin(q.r) {
		return fail(http.StatusForbidden, "error.crosssite")
	}
	if subtle.ConstantTimeCompare([]byte(form.Get(CSRFField)), []byte(q.sess.CSRF)) != 1 {
		return fail(http.StatusForbidden, "error.csrf")
	}
	return nil
}

// inquiryRow is a line of the list of inquiries.
type inquiryRow struct {
	Href, Label, Status, StatusKey, Sites, Created, Released string
}

func statusKey(s brokerv1.InquiryStatus) string {
	switch s {
	case brokerv1.InquiryStatus_DRAFT:
		return "inq.status.draft"
	case brokerv1.InquiryStatus_RELEASED:
		return "inq.status.released"
	case brokerv1.InquiryStatus_CLOSED:
		return "inq.status.closed"
	}
	return "inq.status.unknown"
}

func day(ts *timestamppb.Timestamp) string {
	if ts == nil {
		return ""
	}
	return ts.AsTime().UTC().Format("2006-01-02")
}

func minute(ts *timestamppb.Timestamp) string {
	if ts == nil {
		return ""
	}
	return ts.AsTime().UTC().Format("2006-01-02 15:04 UTC")
}

func (a *App) inquiries(q *req) error {
	b, err := a.broker()
	if err != nil {
		return err
	}
	res, err := b.ListInquiries(q.ctx, &brokerv1.ListInquiriesOfAuthorRequest{})
	if err != nil {
		return err
	}
	var rows []inquiryRow
	for _, in := range res.GetInquiries() {
		rows = append(rows, inquiryRow{Href: inquiryHref(in.GetId()), Label: in.GetLabel(), StatusKey: statusKey(in.GetStatus()),
			Status: strings.ToLower(in.GetStatus().String()), Sites: strings.Join(in.GetTargetSites(), ", "),
			Created: day(in.GetCreatedAt()), Released: day(in.GetReleasedAt())})
	}
	v := a.view(q, "inq.title")
	v.Section = "inquiries"
	v.Data = rows
	a.render(q, http.StatusOK, "inquiries", v)
	return nil
}

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
	// FileLost: a file was chosen, but the form comes back (a browser
	// cannot be given a file to send again).
	FileLost  bool
	MaxUpload string
}

type siteChoice struct {
	ID      string
	Checked bool
}

// targetSites are the sites the broker knows, those chosen checked; a chosen
// site the broker no longer knows stays in the list, so an edit keeps it.
func (a *App) targetSites(q *req, chosen []string) ([]siteChoice, error) {
	b, err := a.broker()
	if err != nil {
		return nil, err
	}
	res, err := b.ListSites(q.ctx, &brokerv1.ListSitesRequest{})
	if err != nil {
		return nil, err
	}
	ids := append([]string(nil), res.GetSites()...)
	for _, c := range chosen {
		if !slices.Contains(ids, c) {
			ids = append(ids, c)
		}
	}
	sort.Strings(ids)
	out := make([]siteChoice, 0, len(ids))
	for _, id := range ids {
		out = append(out, siteChoice{ID: id, Checked: slices.Contains(chosen, id)})
	}
	return out, nil
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
	v := a.view(q, "inq.new")
	if f.ID != "" {
		v.Title = v.T("inq.edit")
		v.Crumbs = []crumb{{v.T("inq.title"), InquiriesPath}, {f.Label, inquiryHref(f.ID)}, {v.Title, ""}}
	} else {
		v.Crumbs = []crumb{{v.T("inq.title"), InquiriesPath}, {v.Title, ""}}
	}
	v.Section = "inquiries"
	attach(f.B, v)
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

func (a *App) newInquiry(q *req) error {
	f := &inquiryForm{Action: InquiriesPath, Email: q.sess.User.Email}
	// The user's name as the contact's, split at its last space.
	name := strings.TrimSpace(q.sess.User.Name)
	if name != "" && name != q.sess.User.Email {
		if i := strings.LastIndex(name, " "); i > 0 {
			f.First, f.Last = name[:i], name[i+1:]
		} else {
			f.Last = name
		}
	}
	var err error
	if f.Sites, err = a.targetSites(q, nil); err != nil {
		return err
	}
	// A data element's page links here to start a query with it.
	if urn := q.r.URL.Query().Get("urn"); urn != "" {
		g := &querybuild.Group{ID: querybuild.NewID(), Op: "And", Conds: []*querybuild.Cond{{ID: querybuild.NewID(), URN: urn}}}
		f.B = &querybuild.Builder{Op: "And", Groups: []*querybuild.Group{g}}
		if err := a.lookup(q, f.B); err != nil {
			return err
		}
		if g.Conds[0].Err != "" {
			f.B.Groups[0].Conds = nil
		}
	}
	return a.formPage(q, f, http.StatusOK)
}

// readForm parses an inquiry form (multipart, for the expose PDF) within
// the gateway's body limit; the PDF, if one was chosen, is returned.
func (a *App) readForm(q *req) (url.Values, []byte, string, error) {
	q.r.Body = http.MaxBytesReader(q.w, q.r.Body, a.cfg.MaxUpload)
	err := q.r.ParseMultipartForm(1 << 20)
	if errors.Is(err, http.ErrNotMultipart) {
		err = q.r.ParseForm()
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, nil, "", fail(http.StatusRequestEntityTooLarge, "inq.err.toolarge", sizeText(a.cfg.MaxUpload))
	}
	if err != nil {
		return nil, nil, "", fail(http.StatusBadRequest, "error.badrequest")
	}
	if q.r.MultipartForm != nil {
		defer func() { _ = q.r.MultipartForm.RemoveAll() }()
	}
	form := q.r.PostForm
	if err := a.checkPost(q, form); err != nil {
		return nil, nil, "", err
	}
	var (
		pdf  []byte
		name string
	)
	if q.r.MultipartForm != nil {
		if fhs := q.r.MultipartForm.File["expose"]; len(fhs) > 0 && fhs[0].Size > 0 {
			pdf, name, err = readFile(fhs[0])
			if err != nil {
				return nil, nil, "", err
			}
		}
	}
	return form, pdf, name, nil
}

func readFile(fh *multipart.FileHeader) ([]byte, string, error) {
	f, err := fh.Open()
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	return b, fh.Filename, err
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
	chosen := form["site"]
	if len(chosen) > maxListedSites {
		return nil, nil, fail(http.StatusBadRequest, "error.badrequest")
	}
	if f.Sites, err = a.targetSites(q, chosen); err != nil {
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
	if len(chosen) == 0 {
		f.BadSites = true
		f.Errors = append(f.Errors, v.T("inq.err.sites"))
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

func (a *App) createInquiry(q *req) error {
	b, err := a.broker()
	if err != nil {
		return err
	}
	form, pdf, name, err := a.readForm(q)
	if err != nil {
		return err
	}
	v := a.view(q, "inq.new")
	f, c, err := a.formOf(q, v, form, pdf)
	if err != nil {
		return err
	}
	f.Action = InquiriesPath
	c.ExposeFilename = name
	if len(f.Errors) == 0 {
		in, err := b.CreateInquiry(q.ctx, &brokerv1.CreateInquiryRequest{Content: c})
		if err == nil {
			http.Redirect(q.w, q.r, inquiryHref(in.GetId()), http.StatusSeeOther)
			return nil
		}
		if err := refused(v, f, err); err != nil {
			return err
		}
	}
	return a.formPage(q, f, http.StatusBadRequest)
}

// ownInquiry reads an inquiry of the signed-in user.
func (a *App) ownInquiry(q *req) (*brokerv1.Inquiry, error) {
	b, err := a.broker()
	if err != nil {
		return nil, err
	}
	return b.GetInquiry(q.ctx, &brokerv1.GetInquiryRequest{Id: q.r.PathValue("id")})
}

func (a *App) editInquiry(q *req) error {
	in, err := a.ownInquiry(q)
	if err != nil {
		return err
	}
	if in.GetStatus() == brokerv1.InquiryStatus_CLOSED {
		return fail(http.StatusConflict, "inq.err.closed")
	}
	ct := in.GetContact()
	f := &inquiryForm{ID: in.GetId(), Action: inquiryHref(in.GetId()), Label: in.GetLabel(), Description: in.GetDescription(),
		Title: ct.GetTitle(), First: ct.GetFirstname(), Last: ct.GetLastname(), Email: ct.GetEmail(), Phone: ct.GetPhone(), Org: ct.GetOrganization(),
		Expires: day(in.GetExpiresAt()), Expose: in.GetExpose()}
	if f.Sites, err = a.targetSites(q, in.GetTargetSites()); err != nil {
		return err
	}
	if f.B, err = a.builderOf(q, in.GetQuery()); err != nil {
		return err
	}
	return a.formPage(q, f, http.StatusOK)
}

// builderOf loads a stored query into the builder; a query it cannot show
// is kept as it is (and shown as XML).
func (a *App) builderOf(q *req, doc string) (*querybuild.Builder, error) {
	kept := &querybuild.Builder{Op: "And", Kept: doc}
	s, err := querybuild.ShapeOf(doc)
	if err != nil {
		return kept, nil
	}
	b := &querybuild.Builder{Op: s.Op}
	for i, nodes := range s.Groups {
		g := &querybuild.Group{ID: querybuild.NewID(), Op: s.GroupOps[i]}
		for _, n := range nodes {
			e, err := a.element(q, n.MdrKey)
			if err != nil {
				return nil, err
			}
			if e == nil {
				return kept, nil
			}
			c, ok := querybuild.CondOf(n, e)
			if !ok {
				return kept, nil
			}
			g.Conds = append(g.Conds, c)
		}
		b.Groups = append(b.Groups, g)
	}
	return b, nil
}

func (a *App) updateInquiry(q *req) error {
	b, err := a.broker()
	if err != nil {
		return err
	}
	form, pdf, name, err := a.readForm(q)
	if err != nil {
		return err
	}
	in, err := a.ownInquiry(q)
	if err != nil {
		return err
	}
	v := a.view(q, "inq.edit")
	f, c, err := a.formOf(q, v, form, pdf)
	if err != nil {
		return err
	}
	f.ID, f.Action, f.Expose = in.GetId(), inquiryHref(in.GetId()), in.GetExpose()
	c.ExposeFilename = name
	if len(f.Errors) == 0 {
		_, err := b.UpdateInquiry(q.ctx, &brokerv1.UpdateInquiryRequest{Id: in.GetId(), Content: c})
		if err == nil {
			http.Redirect(q.w, q.r, inquiryHref(in.GetId()), http.StatusSeeOther)
			return nil
		}
		if err := refused(v, f, err); err != nil {
			return err
		}
	}
	return a.formPage(q, f, http.StatusBadRequest)
}

// inquiryPage is an inquiry with its results.
type inquiryPage struct {
	In        *brokerv1.Inquiry
	Href      string
	StatusKey string
	Expires   string
	Created   string
	Released  string
	Draft     bool
	Closed    bool
	Results   *results
	// Events is the results' event stream while replies may come.
	Events string
	// Problem is why the last action failed (the broker's words).
	Problem string
}

func (a *App) showInquiry(q *req) error {
	return a.inquiryView(q, http.StatusOK, "")
}

func (a *App) inquiryView(q *req, code int, problem string) error {
	b, err := a.broker()
	if err != nil {
		return err
	}
	in, err := a.ownInquiry(q)
	if err != nil {
		return err
	}
	v := a.view(q, "inq.title")
	v.Title = in.GetLabel()
	v.Section = "inquiries"
	v.Crumbs = []crumb{{v.T("inq.title"), InquiriesPath}, {v.Title, ""}}
	p := &inquiryPage{In: in, Href: inquiryHref(in.GetId()), StatusKey: statusKey(in.GetStatus()), Expires: minute(in.GetExpiresAt()),
		Created: minute(in.GetCreatedAt()), Released: minute(in.GetReleasedAt()),
		Draft: in.GetStatus() == brokerv1.InquiryStatus_DRAFT, Closed: in.GetStatus() == brokerv1.InquiryStatus_CLOSED, Problem: problem}
	if !p.Draft {
		res, err := b.ListReplies(q.ctx, &brokerv1.ListRepliesRequest{Id: in.GetId()})
		if err != nil {
			return err
		}
		p.Results = resultsOf(v, in, res)
		if !p.Closed {
			p.Events = p.Href + "/events"
		}
	}
	v.Data = p
	a.render(q, code, "inquiry", v)
	return nil
}

// act runs a change of an inquiry's state from its page's button.
func (a *App) act(q *req, fn func(brokerv1.ResearcherServiceClient, string) error) error {
	b, err := a.broker()
	if err != nil {
		return err
	}
	q.r.Body = http.MaxBytesReader(q.w, q.r.Body, 8<<10)
	if err := q.r.ParseForm(); err != nil {
		return fail(http.StatusBadRequest, "error.badrequest")
	}
	if err := a.checkPost(q, q.r.PostForm); err != nil {
		return err
	}
	id := q.r.PathValue("id")
	if err := fn(b, id); err != nil {
		if st, _ := status.FromError(err); st.Code() == codes.InvalidArgument {
			return a.inquiryView(q, http.StatusConflict, st.Message())
		}
		return err
	}
	http.Redirect(q.w, q.r, inquiryHref(id), http.StatusSeeOther)
	return nil
}

func (a *App) releaseInquiry(q *req) error {
	return a.act(q, func(b brokerv1.ResearcherServiceClient, id string) error {
		_, err := b.ReleaseInquiry(q.ctx, &brokerv1.ReleaseInquiryRequest{Id: id})
		return err
	})
}

func (a *App) closeInquiry(q *req) error {
	return a.act(q, func(b brokerv1.ResearcherServiceClient, id string) error {
		_, err := b.CloseInquiry(q.ctx, &brokerv1.CloseInquiryRequest{Id: id})
		return err
	})
}
