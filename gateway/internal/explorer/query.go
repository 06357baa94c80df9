package explorer

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"fris.dev/gateway/internal/i18n"
	"fris.dev/pkg/samplyquery"
	mdrv1 "fris.dev/proto/mdr/v1"
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
	kindEnum   = "enum"   // permissible values: a pick list
	kindNumber = "number" // INTEGER, FLOAT: a range
	kindDate   = "date"   // DATE: a range of days
	kindText   = "text"   // anything else: text conditions
)

// Text condition operators.
var textOps = []string{"eq", "neq", "like", "in", "any"}

var idRE = regexp.MustCompile(`^[a-z0-9]{1,16}$`)

// newID names a new group or condition.
func newID() string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type builder struct {
	Op     string
	Groups []*bgroup
	Kept   string
}

type bgroup struct {
	ID    string
	Op    string
	Conds []*bcond
	V     *view
}

type bcond struct {
	ID, URN string
	Op      string   // text conditions
	Values  []string // a pick list's chosen values; Values[0] is a text condition's value
	From    string
	To      string
	El      *element
	// Err is what is wrong with the condition, in the page's language.
	Err string
	V   *view
	G   string // the group's id
}

// Value is a text condition's value.
func (c *bcond) Value() string {
	if len(c.Values) > 0 {
		return c.Values[0]
	}
	return ""
}

// Chosen reports whether a pick list's value is chosen.
func (c *bcond) Chosen(v string) bool {
	for _, x := range c.Values {
		if x == v {
			return true
		}
	}
	return false
}

// Conditions counts the builder's conditions.
func (b *builder) Conditions() int {
	n := 0
	for _, g := range b.Groups {
		n += len(g.Conds)
	}
	return n
}

var errBuilder = errors.New("the query builder's form is not valid")

func andOr(s string) (string, bool) {
	switch s {
	case "", "And":
		return "And", true
	case "Or":
		return "Or", true
	}
	return "", false
}

// parseBuilder reads the builder's fields from a form. It checks the
// form's shape only; the registry checks the values (checkBuilder).
func parseBuilder(f url.Values) (*builder, error) {
	b := &builder{Kept: f.Get("qb.kept")}
	var ok bool
	if b.Op, ok = andOr(f.Get("qb.op")); !ok {
		return nil, errBuilder
	}
	if len(b.Kept) > 1<<20 {
		return nil, errBuilder
	}
	groups := map[string]*bgroup{}
	for _, id := range f["qb.group"] {
		if !idRE.MatchString(id) || groups[id] != nil || len(b.Groups) >= maxGroups {
			return nil, errBuilder
		}
		g := &bgroup{ID: id}
		if g.Op, ok = andOr(f.Get("qb.g." + id + ".op")); !ok {
			return nil, errBuilder
		}
		groups[id] = g
		b.Groups = append(b.Groups, g)
	}
	seen := map[string]bool{}
	n := 0
	for _, gc := range f["qb.cond"] {
		gid, cid, found := strings.Cut(gc, ".")
		g := groups[gid]
		if !found || g == nil || !idRE.MatchString(cid) || seen[cid] || n >= maxConditions {
			return nil, errBuilder
		}
		seen[cid] = true
		n++
		p := "qb.c." + cid + "."
		c := &bcond{ID: cid, G: gid, URN: strings.TrimSpace(f.Get(p + "urn")), Op: f.Get(p + "op"),
			From: strings.TrimSpace(f.Get(p + "from")), To: strings.TrimSpace(f.Get(p + "to"))}
		if c.URN == "" || samplyquery.CheckMdrKey(c.URN) != nil || len(c.From) > maxValueLen || len(c.To) > maxValueLen {
			return nil, errBuilder
		}
		if c.Op != "" && !contains(textOps, c.Op) {
			return nil, errBuilder
		}
		vs := f[p+"v"]
		if len(vs) > maxValues {
			return nil, errBuilder
		}
		for _, v := range vs {
			if len(v) > maxValueLen*50 { // a text condition's "one of" list
				return nil, errBuilder
			}
			c.Values = append(c.Values, strings.TrimSpace(v))
		}
		g.Conds = append(g.Conds, c)
	}
	return b, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// element is what the builder needs of a data element.
type element struct {
	URN       string
	Label     label
	Kind      string
	Datatype  string
	Unit      string
	Options   []value
	Min, Max  string // a number's range, as the registry gives it
	Step      string // "1" for integers, "any" for others
	DateFmt   string // a date's format in the registry (Go layout)
	InputType string // the HTML input of a range: number, date or text
	Format    string // the registry's format name, shown as a hint
}

var rangeRE = regexp.MustCompile(`^\s*(-?[0-9.]+)\s*<=\s*x\s*<=\s*(-?[0-9.]+)\s*$`)

// Go layouts of the registry's date formats (services/mdr's rules).
var dateLayouts = map[string]string{
	"DIN_5008":           "01.2006",
	"DIN_5008_WITH_DAYS": "02.01.2006",
	"DIN_5008_ONLY_YEAR": "2006",
	"ISO_8601":           "2006-01",
	"ISO_8601_WITH_DAYS": "2006-01-02",
	"LOCAL_DATE":         "2006-01-02",
}

// elementOf describes a data element for the builder.
func elementOf(urn string, de *mdrv1.DataElement, l i18n.Lang) *element {
	v := de.GetValidation()
	e := &element{URN: urn, Label: pick(de.GetDesignations(), l), Datatype: v.GetDatatype(), Unit: v.GetUnitOfMeasure()}
	if e.Label.Text == "" {
		e.Label.Text = urn
	}
	dt := strings.ToUpper(v.GetDatatype())
	switch {
	case strings.EqualFold(v.GetValueDomainType(), "ENUMERATED") || dt == "ENUMERATED":
		if len(v.GetPermissibleValues()) == 0 {
			// An enumeration without values (a catalogue kept elsewhere)
			// takes text conditions.
			e.Kind = kindText
			break
		}
		e.Kind = kindEnum
		for _, pv := range v.GetPermissibleValues() {
			e.Options = append(e.Options, value{Value: pv.GetValue(), Meaning: pick(pv.GetMeanings(), l)})
		}
	case dt == "INTEGER" || dt == "FLOAT":
		e.Kind, e.InputType, e.Step = kindNumber, "number", "any"
		if dt == "INTEGER" {
			e.Step = "1"
		}
		if m := rangeRE.FindStringSubmatch(v.GetValidationData()); m != nil {
			e.Min, e.Max = m[1], m[2]
		}
	case dt == "DATE":
		e.Kind, e.InputType = kindDate, "text"
		e.Format = strings.ToUpper(strings.TrimSpace(v.GetValidationData()))
		if lay, ok := dateLayouts[e.Format]; ok {
			e.DateFmt = lay
			if strings.Contains(lay, "02") {
				e.InputType = "date" // the browser's date picker, yyyy-mm-dd
			}
		}
	default:
		e.Kind = kindText
	}
	return e
}

// registryDate turns a date as the form holds it into the registry's
// format: a date input sends yyyy-mm-dd.
func (e *element) registryDate(s string) string {
	if e.InputType != "date" || e.DateFmt == "" {
		return s
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return s
	}
	return t.Format(e.DateFmt)
}

// formDate is the inverse of registryDate.
func (e *element) formDate(s string) string {
	if e.InputType != "date" || e.DateFmt == "" {
		return s
	}
	t, err := time.Parse(e.DateFmt, s)
	if err != nil {
		return s
	}
	return t.Format("2006-01-02")
}

// node is a condition as the Samply query language says it. ok is false
// for a condition without anything to ask (an empty text).
func (c *bcond) node() (*samplyquery.Node, bool) {
	n := &samplyquery.Node{MdrKey: c.URN}
	e := c.El
	switch e.Kind {
	case kindEnum:
		var vs []string
		for _, v := range c.Values {
			if v != "" {
				vs = append(vs, v)
			}
		}
		switch len(vs) {
		case 0:
			n.Op = "IsNotNull"
		case 1:
			n.Op, n.Values = "Eq", vs
		default:
			n.Op, n.Values = "In", vs
		}
	case kindNumber, kindDate:
		from, to := c.From, c.To
		if e.Kind == kindDate {
			from, to = e.registryDate(from), e.registryDate(to)
		}
		switch {
		case from != "" && to != "" && from == to:
			n.Op, n.Values = "Eq", []string{from}
		case from != "" && to != "":
			n.Op, n.Values = "Between", []string{from, to}
		case from != "":
			n.Op, n.Values = "Geq", []string{from}
		case to != "":
			n.Op, n.Values = "Leq", []string{to}
		default:
			n.Op = "IsNotNull"
		}
	default:
		v := c.Value()
		switch c.Op {
		case "any":
			n.Op = "IsNotNull"
			return n, true
		case "in":
			vs := splitList(v)
			if len(vs) == 0 {
				return nil, false
			}
			n.Op, n.Values = "In", vs
			if len(vs) == 1 {
				n.Op = "Eq"
			}
			return n, true
		}
		if v == "" {
			return nil, false
		}
		switch c.Op {
		case "neq":
			n.Op, n.Values = "Neq", []string{v}
		case "like":
			n.Op, n.Values = "Like", []string{"%" + v + "%"}
		default:
			n.Op, n.Values = "Eq", []string{v}
		}
	}
	return n, true
}

// splitList reads "a, b; c" or one value a line.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' || r == '\n' || r == '\r' }) {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// query is the builder's query in the Samply query language, as the
// broker stores it and the banks receive it. Every condition's El must be
// set.
func (b *builder) query() string {
	if b.Conditions() == 0 && b.Kept != "" {
		return b.Kept
	}
	var groups []*samplyquery.Node
	for _, g := range b.Groups {
		var conds []*samplyquery.Node
		for _, c := range g.Conds {
			if n, ok := c.node(); ok {
				conds = append(conds, n)
			}
		}
		switch len(conds) {
		case 0:
		case 1:
			groups = append(groups, conds[0])
		default:
			groups = append(groups, &samplyquery.Node{Op: g.Op, Children: conds})
		}
	}
	where := &samplyquery.Node{Op: "Where"}
	switch len(groups) {
	case 0:
	case 1:
		where.Children = groups
	default:
		where.Children = []*samplyquery.Node{{Op: b.Op, Children: groups}}
	}
	return samplyquery.Render(&samplyquery.Query{Where: where})
}

// shape is a query as the builder can show it: groups of conditions, the
// data elements not yet looked up.
type shape struct {
	op     string
	groups [][]*samplyquery.Node
	gops   []string
}

var errShape = errors.New("the query is not of the builder's shape")

// shapeOf reads a stored query into groups of conditions: a condition, a
// group of conditions, or a group of such, as the builder writes them.
func shapeOf(doc string) (*shape, error) {
	q, err := samplyquery.Parse([]byte(doc))
	if err != nil {
		return nil, err
	}
	s := &shape{op: "And"}
	top := q.Where.Children
	if len(top) == 1 && isGroup(top[0]) {
		s.op, top = top[0].Op, top[0].Children
	}
	for _, n := range top {
		if !isGroup(n) {
			s.groups, s.gops = append(s.groups, []*samplyquery.Node{n}), append(s.gops, "And")
			continue
		}
		for _, c := range n.Children {
			if isGroup(c) {
				return nil, errShape
			}
		}
		s.groups, s.gops = append(s.groups, n.Children), append(s.gops, n.Op)
	}
	return s, nil
}

func isGroup(n *samplyquery.Node) bool { return n.Op == "And" || n.Op == "Or" }

// condOf is a condition of a stored query in the builder's terms, given
// its data element; false when the builder cannot say it.
func condOf(n *samplyquery.Node, e *element) (*bcond, bool) {
	c := &bcond{ID: newID(), URN: n.MdrKey, El: e}
	if n.Op == "IsNotNull" {
		if e.Kind == kindText {
			c.Op = "any"
		}
		return c, true
	}
	switch e.Kind {
	case kindEnum:
		if n.Op != "Eq" && n.Op != "In" {
			return nil, false
		}
		c.Values = n.Values
	case kindNumber, kindDate:
		conv := func(s string) string {
			if e.Kind == kindDate {
				return e.formDate(s)
			}
			return s
		}
		switch n.Op {
		case "Eq":
			c.From, c.To = conv(n.Values[0]), conv(n.Values[0])
		case "Between":
			c.From, c.To = conv(n.Values[0]), conv(n.Values[1])
		case "Geq":
			c.From = conv(n.Values[0])
		case "Leq":
			c.To = conv(n.Values[0])
		default:
			return nil, false
		}
	default:
		switch n.Op {
		case "Eq":
			c.Op, c.Values = "eq", n.Values
		case "Neq":
			c.Op, c.Values = "neq", n.Values
		case "In":
			c.Op, c.Values = "in", []string{strings.Join(n.Values, ", ")}
		case "Like":
			v := n.Values[0]
			if len(v) < 2 || !strings.HasPrefix(v, "%") || !strings.HasSuffix(v, "%") || strings.Contains(v[1:len(v)-1], "%") {
				return nil, false
			}
			c.Op, c.Values = "like", []string{v[1 : len(v)-1]}
		default:
			return nil, false
		}
	}
	return c, true
}

// checks are the values of a condition the registry is to check: not a
// "contains" text, which is a part of a value.
func (c *bcond) checks() []string {
	e := c.El
	switch e.Kind {
	case kindEnum:
		return c.Values
	case kindNumber:
		return nonEmpty(c.From, c.To)
	case kindDate:
		return nonEmpty(e.registryDate(c.From), e.registryDate(c.To))
	}
	switch c.Op {
	case "eq", "neq", "":
		return nonEmpty(c.Value())
	case "in":
		return splitList(c.Value())
	}
	return nil
}

func nonEmpty(vs ...string) []string {
	var out []string
	for _, v := range vs {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// outOfOrder reports a range whose lower end is above its upper one.
func (c *bcond) outOfOrder() bool {
	if c.El.Kind != kindNumber || c.From == "" || c.To == "" {
		return false
	}
	a, err1 := strconv.ParseFloat(c.From, 64)
	b, err2 := strconv.ParseFloat(c.To, 64)
	return err1 == nil && err2 == nil && a > b
}

// TextOps are the operators a text condition offers.
func (c *bcond) TextOps() []string { return textOps }
