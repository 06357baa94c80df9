package explorer

import (
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"fris.dev/gateway/internal/explorer/querybuild"
	"fris.dev/gateway/internal/explorer/wordmatch"

	mdrv1 "fris.dev/proto/mdr/v1"
)

// The criteria catalogue beside the query builder: the namespace's groups
// and data elements as a tree, read from the registry's member lists (one
// call per group). An element's values or range come when it is opened
// (htmx: one call for the element it needs, not one per element for every
// form page); without script its add button adds the condition, filled in
// the builder then. Either way the button adds to the builder's last
// group: by htmx, or by the form's own submit, which comes back.

// Bounds of one catalogue: a search data set has tens of elements; a
// namespace far larger is browsed on its registry pages.
const (
	catMaxDepth    = 6
	catMaxElements = 300
	catMaxMembers  = 1000
)

// catalogue is a namespace's tree.
type catalogue struct {
	V      *view
	NS     string
	Root   *catGroup
	Capped bool // the tree holds catMaxElements; the namespace has more
}

// catGroup is a group of the registry (the root: the namespace).
type catGroup struct {
	URN      string
	Label    label
	Groups   []*catGroup
	Elements []*catElement
}

// catElement is a data element of the tree; Key names its HTML ids. El,
// when set, describes it for the builder (an opened element's body).
type catElement struct {
	Key, URN string
	Label    label
	V        *view
	El       *querybuild.Element
}

var catKeyRE = regexp.MustCompile(`^e[0-9]{1,4}$`)

// attach gives the tree the page's view, for its texts.
func (c *catalogue) attach(v *view) {
	c.V = v
	var walk func(g *catGroup)
	walk = func(g *catGroup) {
		for _, e := range g.Elements {
			e.V = v
		}
		for _, s := range g.Groups {
			walk(s)
		}
	}
	walk(c.Root)
}

// catalogueOf reads ns's tree from the registry: its groups, nested, and
// their data elements.
func (a *App) catalogueOf(q *req, ns string) (*catalogue, error) {
	c := &catalogue{NS: ns, Root: &catGroup{}}
	res, err := a.cfg.MDR.ListNamespaceMembers(q.ctx, &mdrv1.NamespaceMembersRequest{Namespace: ns, Limit: catMaxMembers})
	if err != nil {
		return nil, err
	}
	n := 0
	if err := a.catFill(q, c, c.Root, res.GetResults(), 0, &n); err != nil {
		return nil, err
	}
	return c, nil
}

// catFill adds the members ms to g, groups with their members (a group
// with none left out); n counts the tree's elements. A level's groups are
// read wordsLookups at a time, and added in the registry's order.
func (a *App) catFill(q *req, c *catalogue, g *catGroup, ms []*mdrv1.Member, depth int, n *int) error {
	subs := make([][]*mdrv1.Member, len(ms))
	errs := make([]error, len(ms))
	var wg sync.WaitGroup
	slots := make(chan struct{}, wordsLookups)
	for i, m := range ms {
		if m.GetType() != "DATAELEMENTGROUP" || depth >= catMaxDepth {
			continue
		}
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			res, err := a.cfg.MDR.GetDataElementGroupMembers(q.ctx, &mdrv1.MembersRequest{Urn: m.GetId(), Limit: catMaxMembers})
			subs[i], errs[i] = res.GetResults(), err
		}()
	}
	wg.Wait()
	for i, m := range ms {
		switch m.GetType() {
		case "DATAELEMENTGROUP":
			if depth >= catMaxDepth {
				continue
			}
			if errs[i] != nil {
				return errs[i]
			}
			sub := &catGroup{URN: m.GetId(), Label: pick(m.GetDesignations(), q.lang)}
			if err := a.catFill(q, c, sub, subs[i], depth+1, n); err != nil {
				return err
			}
			if len(sub.Groups)+len(sub.Elements) > 0 {
				g.Groups = append(g.Groups, sub)
			}
		case "DATAELEMENT":
			if *n >= catMaxElements {
				c.Capped = true
				continue
			}
			*n++
			e := &catElement{Key: "e" + strconv.Itoa(*n), URN: m.GetId(), Label: pick(m.GetDesignations(), q.lang)}
			if e.Label.Text == "" {
				e.Label.Text = e.URN
			}
			g.Elements = append(g.Elements, e)
		}
	}
	return nil
}

// qbCatElement is an opened catalogue element's body (htmx): its
// permissible values or range, and its add button.
func (a *App) qbCatElement(q *req) error {
	vals := q.r.URL.Query()
	urn, key := vals.Get("urn"), vals.Get("key")
	if !catKeyRE.MatchString(key) || urn == "" || len(urn) > 200 {
		return fail(http.StatusBadRequest, "error.badrequest")
	}
	e, err := a.element(q, urn)
	if err != nil {
		return err
	}
	if e == nil {
		return fail(http.StatusNotFound, "qb.err.unknown")
	}
	v := a.view(q, "qb.title")
	v.Partial, v.Data = true, &catElement{Key: key, URN: urn, Label: e.Label, V: v, El: e}
	a.render(q, http.StatusOK, "cat-body-part", v)
	return nil
}

// catAdding reports a form sent by a catalogue element's add button (no
// script): the form comes back with the condition, nothing is saved.
func catAdding(form url.Values) bool { return form.Get("qb.catadd") != "" }

// catCond is the condition a catalogue element's fields ask for: its
// chosen values, else its range, else (nothing chosen) a condition to be
// filled in the builder. The fields are cat.<urn>.v, .from and .to.
func catCond(form url.Values, urn, g string) (*querybuild.Cond, error) {
	if !querybuild.ValidID(g) || urn == "" || len(urn) > 200 {
		return nil, fail(http.StatusBadRequest, "error.badrequest")
	}
	id := querybuild.NewID()
	p := "cat." + urn + "."
	f := url.Values{"qb.group": {g}, "qb.cond": {g + "." + id}, "qb.c." + id + ".urn": {urn},
		"qb.c." + id + ".from": {form.Get(p + "from")}, "qb.c." + id + ".to": {form.Get(p + "to")}}
	for _, v := range form[p+"v"] {
		if v = strings.TrimSpace(v); v != "" {
			f.Add("qb.c."+id+".v", v)
		}
	}
	b, err := querybuild.Parse(f)
	if err != nil || len(b.Groups) != 1 || len(b.Groups[0].Conds) != 1 {
		return nil, fail(http.StatusBadRequest, "error.badrequest")
	}
	return b.Groups[0].Conds[0], nil
}

// catAdd adds the condition of the catalogue element the form's add
// button names to b's last group (a new group when b has none).
func catAdd(form url.Values, b *querybuild.Builder) error {
	if b.Conditions() >= 50 {
		return fail(http.StatusBadRequest, "cat.err.full")
	}
	if len(b.Groups) == 0 {
		b.Groups = []*querybuild.Group{{ID: querybuild.NewID(), Op: "And"}}
	}
	g := b.Groups[len(b.Groups)-1]
	c, err := catCond(form, form.Get("qb.catadd"), g.ID)
	if err != nil {
		return err
	}
	g.Conds = append(g.Conds, c)
	return nil
}

// qbCatalogue is the catalogue of namespace qb.ns (htmx, when the
// builder's namespace changes).
func (a *App) qbCatalogue(q *req) error {
	ns := q.r.URL.Query().Get("qb.ns")
	if ns == "" || len(ns) > 200 {
		return fail(http.StatusBadRequest, "error.badrequest")
	}
	c, err := a.catalogueOf(q, ns)
	if err != nil {
		return err
	}
	v := a.view(q, "qb.title")
	c.attach(v)
	v.Partial, v.Data = true, struct{ Cat *catalogue }{c}
	a.render(q, http.StatusOK, "qb-catalogue-part", v)
	return nil
}

// qbCatAdd is a condition from the catalogue for the builder's last group
// (htmx; qb.group names the group).
func (a *App) qbCatAdd(q *req) error {
	vals := q.r.URL.Query()
	c, err := catCond(vals, vals.Get("urn"), vals.Get("qb.group"))
	if err != nil {
		return err
	}
	e, err := a.element(q, c.URN)
	if err != nil {
		return err
	}
	if e == nil {
		return fail(http.StatusNotFound, "qb.err.unknown")
	}
	v := a.view(q, "qb.title")
	c.El, c.V = e, v
	if e.Kind == querybuild.KindText {
		c.Op = "eq"
	}
	v.Partial, v.Data = true, c
	a.render(q, http.StatusOK, "qb-cond-added", v)
	return nil
}

// findElements finds the namespace's data elements by whole words and
// word prefixes of their designations and definitions, in every language
// the registry has them in, ranked (wordmatch). The registry's search,
// which matches substrings, gives the candidates: each match contains the
// query's longest word.
func (a *App) findElements(q *req, ns, text string, limit int) ([]member, error) {
	words := wordmatch.Query(text)
	if len(words) == 0 {
		return nil, nil
	}
	res, err := a.cfg.MDR.SearchNamespace(q.ctx, &mdrv1.SearchRequest{Namespace: ns, Query: wordmatch.Longest(words), Limit: catMaxMembers})
	if err != nil {
		return nil, err
	}
	type hit struct {
		m    *mdrv1.Member
		tier int
	}
	var hits []hit
	for _, m := range res.GetResults() {
		if m.GetType() != "DATAELEMENT" {
			continue
		}
		var names, defs []string
		for _, d := range m.GetDesignations() {
			names, defs = append(names, d.GetDesignation()), append(defs, d.GetDefinition())
		}
		if t := wordmatch.Tier(words, names, defs); t != wordmatch.NoMatch {
			hits = append(hits, hit{m, t})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].tier < hits[j].tier })
	var out []member
	for _, h := range hits {
		if len(out) == limit {
			break
		}
		out = append(out, memberOf(h.m.GetId(), h.m.GetType(), h.m.GetDesignations(), q.lang))
	}
	return out, nil
}
