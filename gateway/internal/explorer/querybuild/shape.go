package querybuild

import (
	"errors"
	"strings"

	"fris.dev/pkg/samplyquery"
)

// Shape is a query as the builder can show it: groups of conditions, the
// data elements not yet looked up.
type Shape struct {
	Op       string
	Groups   [][]*samplyquery.Node
	GroupOps []string
}

var errShape = errors.New("the query is not of the builder's shape")

// ShapeOf reads a stored query into groups of conditions: a condition, a
// group of conditions, or a group of such, as the builder writes them.
func ShapeOf(doc string) (*Shape, error) {
	q, err := samplyquery.Parse([]byte(doc))
	if err != nil {
		return nil, err
	}
	s := &Shape{Op: "And"}
	top := q.Where.Children
	if len(top) == 1 && isGroup(top[0]) {
		s.Op, top = top[0].Op, top[0].Children
	}
	for _, n := range top {
		if !isGroup(n) {
			s.Groups, s.GroupOps = append(s.Groups, []*samplyquery.Node{n}), append(s.GroupOps, "And")
			continue
		}
		for _, c := range n.Children {
			if isGroup(c) {
				return nil, errShape
			}
		}
		s.Groups, s.GroupOps = append(s.Groups, n.Children), append(s.GroupOps, n.Op)
	}
	return s, nil
}

// isGroup reports a group of conditions; "none of" values (an And of Neq
// on one element) is one condition.
func isGroup(n *samplyquery.Node) bool { return (n.Op == "And" || n.Op == "Or") && !NoneOf(n) }

// NoneOf reports an And of two or more Neq on one data element: the
// builder's "none of" these values.
func NoneOf(n *samplyquery.Node) bool {
	if n.Op != "And" || len(n.Children) < 2 {
		return false
	}
	for _, c := range n.Children {
		if c.Op != "Neq" || c.MdrKey != n.Children[0].MdrKey {
			return false
		}
	}
	return true
}

// KeyOf is the data element a condition asks about ("none of" included);
// empty for a group.
func KeyOf(n *samplyquery.Node) string {
	if NoneOf(n) {
		return n.Children[0].MdrKey
	}
	return n.MdrKey
}

// noneValues are the values of a "none of" or a Neq.
func noneValues(n *samplyquery.Node) []string {
	if !NoneOf(n) {
		return n.Values
	}
	var vs []string
	for _, c := range n.Children {
		vs = append(vs, c.Values...)
	}
	return vs
}

// CondOf is a condition of a stored query in the builder's terms, given
// its data element; false when the builder cannot say it.
func CondOf(n *samplyquery.Node, e *Element) (*Cond, bool) {
	c := &Cond{ID: NewID(), URN: KeyOf(n), El: e}
	switch {
	case n.Op == "IsNotNull":
		c.Op = "any"
		return c, true
	case n.Op == "IsNull":
		c.Op = "none"
		return c, true
	case isGroup(n):
		return nil, false
	}
	negated := n.Op == "Neq" || NoneOf(n)
	var ok bool
	switch e.Kind {
	case KindEnum:
		switch {
		case negated:
			c.Op, c.Values, ok = "notin", noneValues(n), true
		case n.Op == "Eq" || n.Op == "In":
			c.Op, c.Values, ok = "in", n.Values, true
		}
	case KindNumber, KindDate:
		ok = c.readRange(n)
	case KindText:
		if NoneOf(n) {
			c.Op, c.Values, ok = "notin", []string{strings.Join(noneValues(n), ", ")}, true
		} else {
			ok = c.readText(n)
		}
	}
	if !ok {
		return nil, false
	}
	return c, true
}

// readRange sets the range of c from a range operator; false for another.
func (c *Cond) readRange(n *samplyquery.Node) bool {
	conv := func(s string) string {
		if c.El.Kind == KindDate {
			return c.El.formDate(s)
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
		return false
	}
	return true
}

// readText sets the operator and value of a text condition; false for an
// operator the builder has no field for, or a "Like" other than
// "contains".
func (c *Cond) readText(n *samplyquery.Node) bool {
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
			return false
		}
		c.Op, c.Values = "like", []string{v[1 : len(v)-1]}
	default:
		return false
	}
	return true
}
