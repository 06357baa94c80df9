package explorer

import (
	"net/http"
	"strings"

	"fris.dev/gateway/internal/explorer/querybuild"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	mdrv1 "fris.dev/proto/mdr/v1"
)

// element looks up a data element for the builder; nil when the registry
// has none by that URN (or the user may not see it).
func (a *App) element(q *req, urn string) (*querybuild.Element, error) {
	de, err := a.cfg.MDR.GetDataElement(q.ctx, &mdrv1.UrnRequest{Urn: urn})
	if c := status.Code(err); c == codes.NotFound || c == codes.InvalidArgument || c == codes.PermissionDenied {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return querybuild.ElementOf(urn, de, q.lang), nil
}

// lookup describes every condition's data element, once each; a condition
// on an element the registry does not have says so.
func (a *App) lookup(q *req, b *querybuild.Builder) error {
	seen := map[string]*querybuild.Element{}
	for _, g := range b.Groups {
		for _, c := range g.Conds {
			if c.El != nil {
				continue
			}
			e, ok := seen[c.URN]
			if !ok {
				var err error
				if e, err = a.element(q, c.URN); err != nil {
					return err
				}
				seen[c.URN] = e
			}
			if e == nil {
				c.El = &querybuild.Element{URN: c.URN, Kind: querybuild.KindText, Label: label{Text: c.URN}}
				c.Err = messages.Text(q.lang, "qb.err.unknown")
				continue
			}
			c.El = e
		}
	}
	return nil
}

// checkBuilder checks the conditions' values against the registry's rules
// (the registry's CheckValues), marking each wrong condition; true when
// all are right.
func (a *App) checkBuilder(q *req, b *querybuild.Builder) bool {
	ok := true
	var checks []*mdrv1.ValueCheck
	type span struct {
		c    *querybuild.Cond
		n    int
		from int
	}
	var spans []span
	for _, g := range b.Groups {
		for _, c := range g.Conds {
			if c.Err != "" {
				ok = false
				continue
			}
			if c.Missing() {
				c.Err = messages.Text(q.lang, "qb.err.novalue")
				if c.El.Kind == querybuild.KindEnum {
					c.Err = messages.Text(q.lang, "qb.err.nopick")
				}
				ok = false
				continue
			}
			if c.OutOfOrder() {
				c.Err = messages.Text(q.lang, "qb.err.order")
				ok = false
				continue
			}
			vs := c.Checks()
			spans = append(spans, span{c, len(vs), len(checks)})
			for _, v := range vs {
				checks = append(checks, &mdrv1.ValueCheck{Urn: c.URN, Value: v})
			}
		}
	}
	if len(checks) == 0 {
		return ok
	}
	res, err := a.cfg.MDR.CheckValues(q.ctx, &mdrv1.CheckValuesRequest{Checks: checks})
	if err != nil || len(res.GetVerdicts()) != len(checks) {
		// Not checked is not wrong: the broker checks the query's form,
		// and the banks the values.
		a.cfg.Log.WarnContext(q.r.Context(), "explorer: the registry did not check the query's values", "err", err)
		return ok
	}
	for _, s := range spans {
		for _, vd := range res.GetVerdicts()[s.from : s.from+s.n] {
			if !vd.GetValid() {
				s.c.Err = messages.Text(q.lang, "qb.err.value") + " " + vd.GetReason()
				ok = false
				break
			}
		}
	}
	return ok
}

// qbElements finds data elements to add to a group (htmx, as the user
// types).
func (a *App) qbElements(q *req) error {
	vals := q.r.URL.Query()
	ns, text, g := vals.Get("qb.ns"), strings.TrimSpace(vals.Get("q")), vals.Get("g")
	if len(text) > 200 || !querybuild.ValidID(g) || ns == "" {
		return fail(http.StatusBadRequest, "error.badrequest")
	}
	d := struct {
		G     string
		Query string
		Found []member
	}{G: g, Query: text}
	if text != "" {
		found, err := a.findElements(q, ns, text, 20)
		if err != nil {
			return err
		}
		d.Found = found
	}
	v := a.view(q, "qb.title")
	v.Partial, v.Data = true, d
	a.render(q, http.StatusOK, "qb-found", v)
	return nil
}

// qbCondition is a new condition on a data element, for group g.
func (a *App) qbCondition(q *req) error {
	vals := q.r.URL.Query()
	urn, g := vals.Get("urn"), vals.Get("g")
	if !querybuild.ValidID(g) || urn == "" || len(urn) > 200 {
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
	c := &querybuild.Cond{ID: querybuild.NewID(), URN: urn, El: e, V: v, G: g}
	if e.Kind == querybuild.KindText {
		c.Op = "eq"
	}
	v.Partial, v.Data = true, c
	a.render(q, http.StatusOK, "qb-cond-added", v)
	return nil
}

// qbGroup is a new, empty group.
func (a *App) qbGroup(q *req) error {
	v := a.view(q, "qb.title")
	v.Partial, v.Data = true, &querybuild.Group{ID: querybuild.NewID(), Op: "And", V: v}
	a.render(q, http.StatusOK, "qb-group-added", v)
	return nil
}

// qbPreview shows the builder's query as the banks will get it, checked
// against the registry.
func (a *App) qbPreview(q *req) error {
	b, err := querybuild.Parse(q.r.URL.Query())
	if err != nil {
		return fail(http.StatusBadRequest, "error.badrequest")
	}
	if err := a.lookup(q, b); err != nil {
		return err
	}
	v := a.view(q, "qb.title")
	d := struct {
		XML      string
		Problems []string
		Words    words
	}{}
	a.checkBuilder(q, b)
	for _, g := range b.Groups {
		for _, c := range g.Conds {
			if c.Err != "" {
				d.Problems = append(d.Problems, c.El.Label.Text+": "+c.Err)
			}
		}
	}
	d.XML = b.Query()
	d.Words = a.builderWords(q, v, b)
	v.Partial, v.Data = true, d
	a.render(q, http.StatusOK, "qb-preview", v)
	return nil
}
