// Package querybuild is the Explorer's query builder: its form (groups of
// conditions on data elements) read, translated to a query in the Samply
// query language as the broker stores it, and a stored query read back
// into the form when it has the builder's shape. It checks the form's
// shape; the registry checks the values, and the Explorer asks it.
package querybuild

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"fris.dev/pkg/samplyquery"
)

// The query builder's form: groups of conditions on data elements, the
// conditions of a group joined by the group's And or Or, the groups by the
// builder's. Its fields (every name starts with qb.):
//
//	qb.op              And | Or, between the groups
//	qb.group           a group's id, once per group, in order
//	qb.g.<G>.op        And | Or, within group G
//	qb.cond            <G>.<C>, once per condition, in order
//	qb.c.<C>.urn       the data element
//	qb.c.<C>.op        text conditions: eq | neq | like | in | any
//	qb.c.<C>.v         the value (text); the chosen values (pick lists)
//	qb.c.<C>.from/.to  the range (numbers, dates)
//	qb.kept            a query the builder cannot show, kept unchanged
//	                   while the builder has no condition
//
// Ids are the builder's own short random names; the form's order of
// qb.group and qb.cond is the query's order.

// Limits of one builder: a feasibility query has a handful of conditions.
const (
	maxGroups     = 20
	maxConditions = 50
	maxValues     = 500
	maxValueLen   = 200
)

// Condition kinds, by the data element's datatype.
const (
	KindEnum   = "enum"   // permissible values: a pick list
	KindNumber = "number" // INTEGER, FLOAT: a range
	KindDate   = "date"   // DATE: a range of days
	KindText   = "text"   // anything else: text conditions
)

// Text condition operators.
var textOps = []string{"eq", "neq", "like", "in", "any"}

var idRE = regexp.MustCompile(`^[a-z0-9]{1,16}$`)

// ValidID reports whether id can name a group or condition of the form.
func ValidID(id string) bool { return idRE.MatchString(id) }

// NewID names a new group or condition.
func NewID() string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Builder is the form: its groups in order, joined by Op (And or Or).
type Builder struct {
	Op     string
	Groups []*Group
	// Kept is a query the builder cannot show, sent unchanged while the
	// builder has no condition.
	Kept string
}

// Group is a group of conditions joined by Op.
type Group struct {
	ID    string
	Op    string
	Conds []*Cond
	// V gives the templates the page's texts.
	V Texts
}

// Texts are a page's messages in its language, as the templates ask for
// them: the Explorer's view.
type Texts interface {
	T(key string, args ...any) string
}

// Cond is a condition on a data element.
type Cond struct {
	ID, URN string
	Op      string   // text conditions
	Values  []string // a pick list's chosen values; Values[0] is a text condition's value
	From    string
	To      string
	El      *Element
	// Err is what is wrong with the condition, in the page's language.
	Err string
	V   Texts
	G   string // the group's id
}

// Value is a text condition's value.
func (c *Cond) Value() string {
	if len(c.Values) > 0 {
		return c.Values[0]
	}
	return ""
}

// Chosen reports whether a pick list's value is chosen.
func (c *Cond) Chosen(v string) bool {
	for _, x := range c.Values {
		if x == v {
			return true
		}
	}
	return false
}

// Conditions counts the builder's conditions.
func (b *Builder) Conditions() int {
	n := 0
	for _, g := range b.Groups {
		n += len(g.Conds)
	}
	return n
}

var ErrForm = errors.New("the query builder's form is not valid")

func andOr(s string) (string, bool) {
	switch s {
	case "", "And":
		return "And", true
	case "Or":
		return "Or", true
	}
	return "", false
}

// Parse reads the builder's fields from a form. It checks the form's
// shape only; the registry checks the values (the Explorer's
// checkBuilder).
func Parse(f url.Values) (*Builder, error) {
	b := &Builder{Kept: f.Get("qb.kept")}
	var ok bool
	if b.Op, ok = andOr(f.Get("qb.op")); !ok || len(b.Kept) > 1<<20 {
		return nil, ErrForm
	}
	groups, err := parseGroups(f, b)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, gc := range f["qb.cond"] {
		gid, cid, found := strings.Cut(gc, ".")
		g := groups[gid]
		if !found || g == nil || !idRE.MatchString(cid) || seen[cid] || len(seen) >= maxConditions {
			return nil, ErrForm
		}
		seen[cid] = true
		c, err := parseCond(f, gid, cid)
		if err != nil {
			return nil, err
		}
		g.Conds = append(g.Conds, c)
	}
	return b, nil
}

// parseGroups adds the form's groups to b, in order, and returns them by
// id.
func parseGroups(f url.Values, b *Builder) (map[string]*Group, error) {
	groups := map[string]*Group{}
	for _, id := range f["qb.group"] {
		if !idRE.MatchString(id) || groups[id] != nil || len(b.Groups) >= maxGroups {
			return nil, ErrForm
		}
		g := &Group{ID: id}
		var ok bool
		if g.Op, ok = andOr(f.Get("qb.g." + id + ".op")); !ok {
			return nil, ErrForm
		}
		groups[id] = g
		b.Groups = append(b.Groups, g)
	}
	return groups, nil
}

// parseCond reads condition cid of group gid.
func parseCond(f url.Values, gid, cid string) (*Cond, error) {
	p := "qb.c." + cid + "."
	c := &Cond{ID: cid, G: gid, URN: strings.TrimSpace(f.Get(p + "urn")), Op: f.Get(p + "op"),
		From: strings.TrimSpace(f.Get(p + "from")), To: strings.TrimSpace(f.Get(p + "to"))}
	if c.URN == "" || samplyquery.CheckMdrKey(c.URN) != nil || len(c.From) > maxValueLen || len(c.To) > maxValueLen {
		return nil, ErrForm
	}
	if c.Op != "" && !slices.Contains(textOps, c.Op) {
		return nil, ErrForm
	}
	vs := f[p+"v"]
	if len(vs) > maxValues {
		return nil, ErrForm
	}
	for _, v := range vs {
		if len(v) > maxValueLen*50 { // a text condition's "one of" list
			return nil, ErrForm
		}
		c.Values = append(c.Values, strings.TrimSpace(v))
	}
	return c, nil
}

// TextOps are the operators a text condition offers.
func (c *Cond) TextOps() []string { return textOps }
