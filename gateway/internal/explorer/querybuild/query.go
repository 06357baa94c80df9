package querybuild

import (
	"strconv"
	"strings"

	"fris.dev/pkg/samplyquery"
)

// for a condition without anything to ask (an empty text).
func (c *Cond) node() (*samplyquery.Node, bool) {
	n := &samplyquery.Node{MdrKey: c.URN}
	e := c.El
	switch e.Kind {
	case KindEnum:
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
	case KindNumber, KindDate:
		from, to := c.From, c.To
		if e.Kind == KindDate {
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
	switch e.Kind {
	case KindEnum:
		return c.Values
	case KindNumber:
		return nonEmpty(c.From, c.To)
	case KindDate:
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

// OutOfOrder reports a range whose lower end is above its upper one.
func (c *Cond) OutOfOrder() bool {
	if c.El.Kind != KindNumber || c.From == "" || c.To == "" {
		return false
	}
	a, err1 := strconv.ParseFloat(c.From, 64)
	b, err2 := strconv.ParseFloat(c.To, 64)
	return err1 == nil && err2 == nil && a > b
}
