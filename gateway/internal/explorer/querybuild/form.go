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
//	qb.c.<C>.op        what the condition asks, by the element's kind
//	                   (Ops): pick lists in | notin | any | none, ranges
//	                   range | any | none, texts eq | neq | like | in |
//	                   notin | any | none; empty or another kind's: the
//	                   kind's first
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

// Operators of a condition by its data element's kind, the default
// first: "notin" is none of the values (Neq, or an And of Neq on one
// element), "any" and "none" ask whether the element has a value at all
// (IsNotNull, IsNull).
var opsByKind = map[string][]string{
	KindEnum:   {"in", "notin", "any", "none"},
	KindNumber: {"range", "any", "none"},
	KindDate:   {"range", "any", "none"},
	KindText:   {"eq", "neq", "like", "in", "notin", "any", "none"},
}

// knownOp reports whether op is an operator of some kind.
func knownOp(op string) bool {
	for _, ops := range opsByKind {
		if slices.Contains(ops, op) {
			return true
		}
	}
	return false
}

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
	Op      string   // what it asks (Ops); Mode is the one that counts
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
	if c.Op != "" && !knownOp(c.Op) {
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

// Ops are the operators the condition's data element offers, its
// default first.
func (c *Cond) Ops() []string {
	if c.El == nil {
		return opsByKind[KindText]
	}
	if ops, ok := opsByKind[c.El.Kind]; ok {
		return ops
	}
	return opsByKind[KindText]
}

// TextOps are the operators a text condition offers.
func (c *Cond) TextOps() []string { return opsByKind[KindText] }

// Mode is the operator the condition asks by: its Op when its data
// element offers it, else the element's default.
func (c *Cond) Mode() string {
	ops := c.Ops()
	if slices.Contains(ops, c.Op) {
		return c.Op
	}
	return ops[0]
}

// Missing reports a condition that needs values and has none: a text but
// for "has any/no value", or "none of" a pick list with nothing chosen.
func (c *Cond) Missing() bool {
	switch m := c.Mode(); {
	case m == "any" || m == "none":
		return false
	case c.El.Kind == KindEnum:
		return m == "notin" && len(nonEmpty(c.Values...)) == 0
	case c.El.Kind == KindText:
		if m == "in" || m == "notin" {
			return len(splitList(c.Value())) == 0
		}
		return c.Value() == ""
	}
	return false
}

// Remove takes condition id out of the builder; false when it has none
// by that id.
func (b *Builder) Remove(id string) bool {
	for _, g := range b.Groups {
		for i, c := range g.Conds {
			if c.ID == id {
				g.Conds = slices.Delete(g.Conds, i, i+1)
				return true
			}
		}
	}
	return false
}
