package querybuild

import (
	"strconv"
	"strings"

	"fris.dev/pkg/samplyquery"
)

// node is a condition as the Samply query language says it: a
// comparison, or for "none of" several values an And of Neq on one
// element. ok is false for a condition without anything to ask (an empty
// text or list).
func (c *Cond) node() (*samplyquery.Node, bool) {
	n := &samplyquery.Node{MdrKey: c.URN}
	switch m := c.Mode(); {
	case m == "any":
		n.Op = "IsNotNull"
	case m == "none":
		n.Op = "IsNull"
	case c.El.Kind == KindEnum && m == "notin":
		return noneOf(c.URN, nonEmpty(c.Values...))
	case c.El.Kind == KindEnum:
		n.Op, n.Values = oneOrMore(nonEmpty(c.Values...))
	case c.El.Kind == KindNumber || c.El.Kind == KindDate:
		n.Op, n.Values = c.rangeOp()
	default:
		return c.textNode()
	}
	return n, true
}

// oneOrMore asks for one of vs: any value when there is none.
func oneOrMore(vs []string) (string, []string) {
	switch len(vs) {
	case 0:
		return "IsNotNull", nil
	case 1:
		return "Eq", vs
	}
	return "In", vs
}

// noneOf asks for a value other than each of vs: the query language has
// no "not in", so several values are an And of Neq; false for no value.
func noneOf(urn string, vs []string) (*samplyquery.Node, bool) {
	switch len(vs) {
	case 0:
		return nil, false
	case 1:
		return &samplyquery.Node{Op: "Neq", MdrKey: urn, Values: vs}, true
	}
	and := &samplyquery.Node{Op: "And"}
	for _, v := range vs {
		and.Children = append(and.Children, &samplyquery.Node{Op: "Neq", MdrKey: urn, Values: []string{v}})
	}
	return and, true
}

// rangeOp is a range condition's operator and bounds, dates in the
// registry's format.
func (c *Cond) rangeOp() (string, []string) {
	from, to := c.From, c.To
	if c.El.Kind == KindDate {
		from, to = c.El.registryDate(from), c.El.registryDate(to)
	}
	switch {
	case from != "" && to != "" && from == to:
		return "Eq", []string{from}
	case from != "" && to != "":
		return "Between", []string{from, to}
	case from != "":
		return "Geq", []string{from}
	case to != "":
		return "Leq", []string{to}
	}
	return "IsNotNull", nil
}

// textNode is a text condition's node; false when it has nothing to ask
// (an empty text or list).
func (c *Cond) textNode() (*samplyquery.Node, bool) {
	v := c.Value()
	n := &samplyquery.Node{MdrKey: c.URN}
	switch c.Mode() {
	case "in":
		vs := splitList(v)
		if len(vs) == 0 {
			return nil, false
		}
		n.Op, n.Values = oneOrMore(vs)
		return n, true
	case "notin":
		return noneOf(c.URN, splitList(v))
	}
	if v == "" {
		return nil, false
	}
	switch c.Mode() {
	case "neq":
		n.Op, n.Values = "Neq", []string{v}
	case "like":
		n.Op, n.Values = "Like", []string{"%" + v + "%"}
	default:
		n.Op, n.Values = "Eq", []string{v}
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

// Query is the builder's query in the Samply query language, as the
// broker stores it and the banks receive it. Every condition's El must be
// set.
func (b *Builder) Query() string {
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

// Checks are the values of a condition the registry is to check: not a
// "contains" text, which is a part of a value.
func (c *Cond) Checks() []string {
	e := c.El
	m := c.Mode()
	if m == "any" || m == "none" {
		return nil
	}
	switch e.Kind {
	case KindEnum:
		return c.Values
	case KindNumber:
		return nonEmpty(c.From, c.To)
	case KindDate:
		return nonEmpty(e.registryDate(c.From), e.registryDate(c.To))
	}
	switch m {
	case "eq", "neq":
		return nonEmpty(c.Value())
	case "in", "notin":
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

// OutOfOrder reports a range whose lower end is above its upper one.
func (c *Cond) OutOfOrder() bool {
	if c.El.Kind != KindNumber || c.From == "" || c.To == "" {
		return false
	}
	a, err1 := strconv.ParseFloat(c.From, 64)
	b, err2 := strconv.ParseFloat(c.To, 64)
	return err1 == nil && err2 == nil && a > b
}
