package explorer

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"fris.dev/gateway/internal/explorer/mdrtext"
	"fris.dev/gateway/internal/i18n"
	mdrv1 "fris.dev/proto/mdr/v1"
)

// pageSize is how many members a page lists.
const pageSize = 50

// label and value are the registry's texts in the page's language.
type (
	label = mdrtext.Label
	value = mdrtext.Value
)

func pick(ds []*mdrv1.Designation, l i18n.Lang) label { return mdrtext.Pick(ds, l) }

func primary(tag string) string { return mdrtext.Primary(tag) }

// member is a line of a member list.
type member struct {
	Kind  string // message key of its type
	URN   string
	Href  string
	Label label
	Order int32
}

func memberOf(id, typ string, ds []*mdrv1.Designation, l i18n.Lang) member {
	m := member{URN: id, Label: pick(ds, l), Href: itemHref(typ, id)}
	switch typ {
	case "DATAELEMENT":
		m.Kind = "kind.dataelement"
	case "DATAELEMENTGROUP":
		m.Kind = "kind.group"
	case "RECORD":
		m.Kind = "kind.record"
	default:
		m.Kind = typ
	}
	return m
}

func itemHref(typ, urn string) string {
	switch typ {
	case "DATAELEMENT":
		return Prefix + "/dataelements/" + url.PathEscape(urn)
	case "DATAELEMENTGROUP":
		return Prefix + "/groups/" + url.PathEscape(urn)
	case "RECORD":
		return Prefix + "/records/" + url.PathEscape(urn)
	}
	return ""
}

// namespaceOf is the namespace part of a URN (urn:<ns>:...).
func namespaceOf(urn string) string {
	parts := strings.Split(urn, ":")
	if len(parts) < 3 || !strings.EqualFold(parts[0], "urn") {
		return ""
	}
	return parts[1]
}

func nsHref(ns string) string { return Prefix + "/namespaces/" + url.PathEscape(ns) }

type homeData struct {
	Namespaces []nsItem
}

type nsItem struct {
	Name  string
	Href  string
	Label label
}

func (a *App) home(q *req) error {
	res, err := a.cfg.MDR.ListNamespaces(q.ctx, &mdrv1.ListNamespacesRequest{})
	if err != nil {
		return err
	}
	v := a.view(q, "home.title")
	v.Section = "registry"
	var d homeData
	for _, n := range res.GetNamespaces() {
		d.Namespaces = append(d.Namespaces, nsItem{Name: n.GetName(), Href: nsHref(n.GetName()), Label: pick(n.GetDesignations(), q.lang)})
	}
	v.Data = d
	a.render(q, http.StatusOK, "home", v)
	return nil
}

// listData is a namespace's members or a search's results.
type listData struct {
	Namespace string
	NSLabel   label
	NSHref    string
	SearchURL string
	Query     string
	Searched  bool
	Members   []member
	Total     int32
	From, To  int32
	Prev      string
	Next      string
	Record    bool // never: the member template shows a record's order
}

// offset reads the offset parameter (0 when missing or wrong).
func offset(r *http.Request) int32 {
	n, err := strconv.Atoi(r.URL.Query().Get("offset"))
	if err != nil || n < 0 || n > 1<<20 {
		return 0
	}
	return int32(n)
}

// nsLabel finds a namespace's label in the list of namespaces (the
// registry has no call for one namespace).
func (a *App) nsLabel(q *req, ns string) label {
	res, err := a.cfg.MDR.ListNamespaces(q.ctx, &mdrv1.ListNamespacesRequest{})
	if err != nil {
		return label{}
	}
	for _, n := range res.GetNamespaces() {
		if n.GetName() == ns {
			return pick(n.GetDesignations(), q.lang)
		}
	}
	return label{}
}

func (a *App) namespace(q *req) error {
	ns := q.r.PathValue("namespace")
	off := offset(q.r)
	res, err := a.cfg.MDR.ListNamespaceMembers(q.ctx, &mdrv1.NamespaceMembersRequest{Namespace: ns, Offset: off, Limit: pageSize})
	if err != nil {
		return err
	}
	d := listData{Namespace: ns, NSLabel: a.nsLabel(q, ns), NSHref: nsHref(ns), SearchURL: nsHref(ns) + "/search"}
	a.fill(q, &d, res, off, url.Values{})
	v := a.view(q, "namespace.title")
	v.Title = title(d.NSLabel.Text, ns)
	v.Section = "registry"
	v.Crumbs = []crumb{{v.T("home.title"), Home}, {v.Title, ""}}
	v.Data = d
	a.render(q, http.StatusOK, "namespace", v)
	return nil
}

func (a *App) search(q *req) error {
	ns := q.r.PathValue("namespace")
	text := strings.TrimSpace(q.r.URL.Query().Get("q"))
	if len(text) > 200 {
		return fail(http.StatusBadRequest, "error.badrequest")
	}
	d := listData{Namespace: ns, NSHref: nsHref(ns), SearchURL: nsHref(ns) + "/search", Query: text, Searched: text != ""}
	off := offset(q.r)
	var (
		res *mdrv1.MemberList
		err error
	)
	if text != "" {
		res, err = a.cfg.MDR.SearchNamespace(q.ctx, &mdrv1.SearchRequest{Namespace: ns, Query: text, Offset: off, Limit: pageSize})
	} else {
		// An empty search lists the namespace, as its own page does.
		res, err = a.cfg.MDR.ListNamespaceMembers(q.ctx, &mdrv1.NamespaceMembersRequest{Namespace: ns, Offset: off, Limit: pageSize})
	}
	if err != nil {
		return err
	}
	a.fill(q, &d, res, off, url.Values{"q": {text}})
	v := a.view(q, "search.title")
	v.Section = "registry"
	// htmx asks for the results only as the user types; restoring history
	// it asks for the whole page.
	if q.r.Header.Get("HX-Request") == "true" && q.r.Header.Get("HX-History-Restore-Request") != "true" {
		v.Data, v.Partial = d, true
		a.render(q, http.StatusOK, "results", v)
		return nil
	}
	d.NSLabel = a.nsLabel(q, ns)
	v.Crumbs = []crumb{{v.T("home.title"), Home}, {title(d.NSLabel.Text, ns), d.NSHref}, {v.Title, ""}}
	v.Data = d
	a.render(q, http.StatusOK, "search", v)
	return nil
}

// fill turns a member list into lines and paging links.
func (a *App) fill(q *req, d *listData, res *mdrv1.MemberList, off int32, keep url.Values) {
	for _, m := range res.GetResults() {
		d.Members = append(d.Members, memberOf(m.GetId(), m.GetType(), m.GetDesignations(), q.lang))
	}
	d.Total = res.GetTotalcount()
	if len(d.Members) > 0 {
		d.From, d.To = off+1, off+int32(len(d.Members))
	}
	link := func(o int32) string {
		v := url.Values{}
		for k, vs := range keep {
			v[k] = vs
		}
		if o > 0 {
			v.Set("offset", strconv.Itoa(int(o)))
		}
		if len(v) == 0 {
			return q.r.URL.EscapedPath()
		}
		return q.r.URL.EscapedPath() + "?" + v.Encode()
	}
	if off > 0 {
		d.Prev = link(max(0, off-pageSize))
	}
	if d.To < d.Total {
		d.Next = link(d.To)
	}
}

func title(text, fallback string) string {
	if text != "" {
		return text
	}
	return fallback
}

// itemData is a group's or a record's page.
type itemData struct {
	URN       string
	Label     label
	Namespace string
	Members   []member
	Record    bool
}

func (a *App) group(q *req) error {
	urn := q.r.PathValue("urn")
	labels, err := a.cfg.MDR.GetDataElementGroupLabels(q.ctx, &mdrv1.UrnRequest{Urn: urn})
	if err != nil {
		return err
	}
	res, err := a.cfg.MDR.GetDataElementGroupMembers(q.ctx, &mdrv1.MembersRequest{Urn: urn, Limit: 1000})
	if err != nil {
		return err
	}
	d := itemData{URN: urn, Label: pick(labels.GetDesignations(), q.lang), Namespace: namespaceOf(urn)}
	for _, m := range res.GetResults() {
		d.Members = append(d.Members, memberOf(m.GetId(), m.GetType(), m.GetDesignations(), q.lang))
	}
	a.item(q, "group.title", d)
	return nil
}

func (a *App) record(q *req) error {
	urn := q.r.PathValue("urn")
	labels, err := a.cfg.MDR.GetRecordLabels(q.ctx, &mdrv1.UrnRequest{Urn: urn})
	if err != nil {
		return err
	}
	res, err := a.cfg.MDR.GetRecordMembers(q.ctx, &mdrv1.MembersRequest{Urn: urn, Limit: 1000})
	if err != nil {
		return err
	}
	d := itemData{URN: urn, Label: pick(labels.GetDesignations(), q.lang), Namespace: namespaceOf(urn), Record: true}
	for _, m := range res.GetMembers() {
		mm := memberOf(m.GetId(), m.GetType(), m.GetDesignations(), q.lang)
		mm.Order = m.GetOrder()
		d.Members = append(d.Members, mm)
	}
	a.item(q, "record.title", d)
	return nil
}

func (a *App) item(q *req, kind string, d itemData) {
	v := a.view(q, kind)
	v.Title = title(d.Label.Text, d.URN)
	v.Section = "registry"
	v.Crumbs = a.crumbs(q, v, d.Namespace, v.Title)
	v.Data = d
	a.render(q, http.StatusOK, "item", v)
}

func (a *App) crumbs(q *req, v *view, ns, here string) []crumb {
	c := []crumb{{v.T("home.title"), Home}}
	if ns != "" {
		c = append(c, crumb{title(a.nsLabel(q, ns).Text, ns), nsHref(ns)})
	}
	return append(c, crumb{here, ""})
}

// elementData is a data element's page.
type elementData struct {
	URN          string
	Label        label
	Designations []designation
	Validation   *mdrv1.Validation
	Values       []value
	// ValueDefinitions: the meanings have definitions of their own (the
	// registry often repeats the element's in every meaning).
	ValueDefinitions bool
	Slots            []*mdrv1.Slot
}

type designation struct {
	Lang, Text, Definition string
}

func (a *App) dataElement(q *req) error {
	urn := q.r.PathValue("urn")
	de, err := a.cfg.MDR.GetDataElement(q.ctx, &mdrv1.UrnRequest{Urn: urn})
	if err != nil {
		return err
	}
	d := elementData{URN: urn, Label: pick(de.GetDesignations(), q.lang), Validation: de.GetValidation(), Slots: de.GetSlots()}
	if id := de.GetIdentification().GetUrn(); id != "" {
		d.URN = id
	}
	for _, ds := range de.GetDesignations() {
		d.Designations = append(d.Designations, designation{Lang: primary(ds.GetLang()), Text: ds.GetDesignation(), Definition: ds.GetDefinition()})
	}
	for _, pv := range de.GetValidation().GetPermissibleValues() {
		m := pick(pv.GetMeanings(), q.lang)
		if m.Definition != "" && m.Definition != d.Label.Definition && m.Definition != m.Text {
			d.ValueDefinitions = true
		}
		d.Values = append(d.Values, value{Value: pv.GetValue(), Meaning: m})
	}
	v := a.view(q, "element.title")
	v.Title = title(d.Label.Text, d.URN)
	v.Section = "registry"
	v.Crumbs = a.crumbs(q, v, namespaceOf(d.URN), v.Title)
	v.Data = d
	a.render(q, http.StatusOK, "element", v)
	return nil
}
