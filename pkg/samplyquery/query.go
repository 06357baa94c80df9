// Package samplyquery reads and writes the Samply query language, the XML the
// sites' connectors evaluate: a Query holding one Where whose conditions are
// And/Or groups and the comparisons Eq, Neq, Lt, Leq, Gt, Geq, Like (an
// Attribute: MdrKey + Value), IsNull, IsNotNull (a MdrKey), In (a
// MultivalueAttribute: MdrKey + Values) and Between (a RangeAttribute:
// MdrKey + LowerBound + UpperBound), each element in its schema namespace
// under http://schema.samply.de/common/.
//
// Parse checks a researcher's document against that grammar and Render
// writes it back in one normal form, so every bank reads the same shape
// whatever prefixes or whitespace the researcher used.
package samplyquery

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Namespaces of the Samply common schemas.
const (
	NSQuery      = "http://schema.samply.de/common/Query"
	NSAttribute  = "http://schema.samply.de/common/Attribute"
	NSMulti      = "http://schema.samply.de/common/MultivalueAttribute"
	NSRange      = "http://schema.samply.de/common/RangeAttribute"
	NSMdrKey     = "http://schema.samply.de/common/MdrKey"
	NSValue      = "http://schema.samply.de/common/Value"
	maxDepth     = 64
	maxNodes     = 10000
	maxInputSize = 1 << 20
)

// Node is one condition: a group (Where, And, Or) with children, or a
// comparison on a data element.
type Node struct {
	Op       string // Where, And, Or, Eq, Neq, Lt, Leq, Gt, Geq, Like, IsNull, IsNotNull, In, Between
	Children []*Node
	MdrKey   string
	Values   []string // one for comparisons, >= 1 for In, lower and upper for Between
}

// Query is a parsed query document.
type Query struct {
	ID    string // the optional id attribute
	Where *Node
}

var (
	groups      = map[string]bool{"And": true, "Or": true}
	comparisons = map[string]bool{"Eq": true, "Neq": true, "Lt": true, "Leq": true, "Gt": true, "Geq": true, "Like": true}
	nullChecks  = map[string]bool{"IsNull": true, "IsNotNull": true}
)

// Error is a reason a document is not a valid query; its text is meant for
// the researcher who sent it.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

func fail(format string, a ...any) error { return &Error{msg: fmt.Sprintf(format, a...)} }

// Parse reads a query document. Elements must be in their Samply common
// namespace or in none; anything outside the grammar is an error naming
// what is wrong.
func Parse(doc []byte) (*Query, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, fail("query is empty")
	}
	if len(doc) > maxInputSize {
		return nil, fail("query larger than %d bytes", maxInputSize)
	}
	p := &parser{d: xml.NewDecoder(bytes.NewReader(doc))}
	p.d.Strict = true
	root, err := p.next()
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, fail("query has no root element")
	}
	if err := p.checkName(*root, "Query", NSQuery); err != nil {
		return nil, err
	}
	q := &Query{}
	for _, a := range root.Attr {
		if a.Name.Local == "id" && a.Name.Space == "" {
			q.ID = a.Value
		}
	}
	for {
		el, err := p.next()
		if err != nil {
			return nil, err
		}
		if el == nil {
			break
		}
		switch el.Name.Local {
		case "Where":
			if err := p.checkName(*el, "Where", NSQuery); err != nil {
				return nil, err
			}
			if q.Where != nil {
				return nil, fail("Query holds more than one Where")
			}
			if q.Where, err = p.group("Where", 1); err != nil {
				return nil, err
			}
		case "OrderBy", "GroupBy", "ViewFields":
			return nil, fail("%s is not supported in inquiries", el.Name.Local)
		default:
			return nil, fail("unexpected element %s in Query", el.Name.Local)
		}
	}
	if q.Where == nil {
		return nil, fail("Query has no Where")
	}
	// Nothing may follow the root element but whitespace and comments.
	for {
		tok, err := p.d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fail("malformed XML: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return nil, fail("content after the Query element")
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return nil, fail("content after the Query element")
			}
		case xml.Directive:
			return nil, fail("XML directives (DOCTYPE) are not allowed")
		}
	}
	return q, nil
}

type parser struct {
	d     *xml.Decoder
	nodes int
}

// next returns the next child element at the current level, or nil at the
// end of the enclosing element. Text other than whitespace is an error.
func (p *parser) next() (*xml.StartElement, error) {
	for {
		tok, err := p.d.Token()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, fail("malformed XML: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			p.nodes++
			if p.nodes > maxNodes {
				return nil, fail("query has more than %d elements", maxNodes)
			}
			s := t.Copy()
			return &s, nil
		case xml.EndElement:
			return nil, nil
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return nil, fail("unexpected text %q", truncate(strings.TrimSpace(string(t))))
			}
		case xml.Directive:
			return nil, fail("XML directives (DOCTYPE) are not allowed")
		}
	}
}

func (p *parser) checkName(el xml.StartElement, local, ns string) error {
	if el.Name.Local != local {
		return fail("expected %s, found %s", local, el.Name.Local)
	}
	if el.Name.Space != ns && el.Name.Space != "" {
		return fail("element %s is in namespace %q, want %q", local, el.Name.Space, ns)
	}
	return nil
}

// group reads the conditions of a Where, And or Or up to its end.
func (p *parser) group(op string, depth int) (*Node, error) {
	if depth > maxDepth {
		return nil, fail("conditions nested deeper than %d", maxDepth)
	}
	n := &Node{Op: op}
	for {
		el, err := p.next()
		if err != nil {
			return nil, err
		}
		if el == nil {
			return n, nil
		}
		c, err := p.condition(*el, depth+1)
		if err != nil {
			return nil, err
		}
		n.Children = append(n.Children, c)
	}
}

func (p *parser) condition(el xml.StartElement, depth int) (*Node, error) {
	op := el.Name.Local
	known := groups[op] || comparisons[op] || nullChecks[op] || op == "In" || op == "Between"
	if !known {
		return nil, fail("unknown operator %s", op)
	}
	if err := p.checkName(el, op, NSQuery); err != nil {
		return nil, err
	}
	switch {
	case groups[op]:
		return p.group(op, depth)
	case nullChecks[op]:
		n := &Node{Op: op}
		key, err := p.keyOnly(op)
		if err != nil {
			return nil, err
		}
		n.MdrKey = key
		return n, nil
	}
	wrapper, wrapperNS := "Attribute", NSAttribute
	switch op {
	case "In":
		wrapper, wrapperNS = "MultivalueAttribute", NSMulti
	case "Between":
		wrapper, wrapperNS = "RangeAttribute", NSRange
	}
	w, err := p.next()
	if err != nil {
		return nil, err
	}
	if w == nil {
		return nil, fail("%s has no %s", op, wrapper)
	}
	if err := p.checkName(*w, wrapper, wrapperNS); err != nil {
		return nil, fmt.Errorf("in %s: %w", op, err)
	}
	n := &Node{Op: op}
	if err := p.attribute(n, wrapper); err != nil {
		return nil, err
	}
	if extra, err := p.next(); err != nil {
		return nil, err
	} else if extra != nil {
		return nil, fail("%s holds more than one %s", op, wrapper)
	}
	return n, nil
}

// keyOnly reads the single MdrKey of IsNull/IsNotNull and the end of op.
func (p *parser) keyOnly(op string) (string, error) {
	el, err := p.next()
	if err != nil {
		return "", err
	}
	if el == nil {
		return "", fail("%s has no MdrKey", op)
	}
	if err := p.checkName(*el, "MdrKey", NSMdrKey); err != nil {
		return "", fmt.Errorf("in %s: %w", op, err)
	}
	key, err := p.key(op)
	if err != nil {
		return "", err
	}
	if extra, err := p.next(); err != nil {
		return "", err
	} else if extra != nil {
		return "", fail("unexpected element %s in %s", extra.Name.Local, op)
	}
	return key, nil
}

// attribute reads the inside of an Attribute, MultivalueAttribute or
// RangeAttribute into n.
func (p *parser) attribute(n *Node, wrapper string) error {
	var lower, upper *string
	for {
		el, err := p.next()
		if err != nil {
			return err
		}
		if el == nil {
			break
		}
		switch el.Name.Local {
		case "MdrKey":
			if err := p.checkName(*el, "MdrKey", NSMdrKey); err != nil {
				return err
			}
			if n.MdrKey != "" {
				return fail("%s holds more than one MdrKey", wrapper)
			}
			if n.MdrKey, err = p.key(n.Op); err != nil {
				return err
			}
		case "Value", "LowerBound", "UpperBound":
			if err := p.checkName(*el, el.Name.Local, NSValue); err != nil {
				return err
			}
			v, err := p.text(el.Name.Local)
			if err != nil {
				return err
			}
			switch {
			case el.Name.Local == "Value" && wrapper != "RangeAttribute":
				if wrapper == "Attribute" && len(n.Values) == 1 {
					return fail("%s holds more than one Value", n.Op)
				}
				n.Values = append(n.Values, v)
			case el.Name.Local == "LowerBound" && wrapper == "RangeAttribute" && lower == nil:
				lower = &v
			case el.Name.Local == "UpperBound" && wrapper == "RangeAttribute" && upper == nil:
				upper = &v
			default:
				return fail("unexpected %s in %s of %s", el.Name.Local, wrapper, n.Op)
			}
		default:
			return fail("unexpected element %s in %s of %s", el.Name.Local, wrapper, n.Op)
		}
	}
	if n.MdrKey == "" {
		return fail("%s has no MdrKey", n.Op)
	}
	switch wrapper {
	case "RangeAttribute":
		if lower == nil || upper == nil {
			return fail("Between needs LowerBound and UpperBound")
		}
		n.Values = []string{*lower, *upper}
	default:
		if len(n.Values) == 0 {
			return fail("%s has no Value", n.Op)
		}
	}
	return nil
}

// key reads a MdrKey's text: a data element URN.
func (p *parser) key(op string) (string, error) {
	k, err := p.text("MdrKey")
	if err != nil {
		return "", err
	}
	k = strings.TrimSpace(k)
	if err := CheckMdrKey(k); err != nil {
		return "", fmt.Errorf("in %s: %w", op, err)
	}
	return k, nil
}

// CheckMdrKey accepts a registry URN, urn:<namespace>:dataelement:<id>:<version>.
func CheckMdrKey(k string) error {
	if k == "" {
		return fail("MdrKey is empty")
	}
	parts := strings.Split(k, ":")
	if len(parts) != 5 || !strings.EqualFold(parts[0], "urn") {
		return fail("MdrKey %q is not a data element URN (urn:<namespace>:dataelement:<id>:<version>)", truncate(k))
	}
	for _, p := range parts[1:] {
		if p == "" || strings.ContainsAny(p, " \t\r\n<>&\"'") {
			return fail("MdrKey %q is not a data element URN (urn:<namespace>:dataelement:<id>:<version>)", truncate(k))
		}
	}
	return nil
}

// text reads character data up to the end of the current element; child
// elements are an error.
func (p *parser) text(name string) (string, error) {
	var b strings.Builder
	for {
		tok, err := p.d.Token()
		if err != nil {
			return "", fail("malformed XML: %v", err)
		}
		switch t := tok.(type) {
		case xml.CharData:
			b.Write(t)
		case xml.EndElement:
			return b.String(), nil
		case xml.StartElement:
			return "", fail("unexpected element %s in %s", t.Name.Local, name)
		case xml.Directive:
			return "", fail("XML directives (DOCTYPE) are not allowed")
		}
	}
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// Render writes q in normal form: the Query element with its namespaces
// declared once (the default namespace is the Query schema's), no XML
// declaration, so it can stand alone or inside an Inquiry.
func Render(q *Query) string {
	var b strings.Builder
	b.WriteString(`<Query xmlns="` + NSQuery + `" xmlns:a="` + NSAttribute + `" xmlns:m="` + NSMulti +
		`" xmlns:r="` + NSRange + `" xmlns:k="` + NSMdrKey + `" xmlns:v="` + NSValue + `"`)
	if q.ID != "" {
		b.WriteString(` id="`)
		escape(&b, q.ID)
		b.WriteString(`"`)
	}
	b.WriteString(">")
	renderNode(&b, q.Where)
	b.WriteString("</Query>")
	return b.String()
}

func renderNode(b *strings.Builder, n *Node) {
	if len(n.Children) == 0 && (n.Op == "Where" || groups[n.Op]) {
		b.WriteString("<" + n.Op + "/>")
		return
	}
	b.WriteString("<" + n.Op + ">")
	switch {
	case n.Op == "Where" || groups[n.Op]:
		for _, c := range n.Children {
			renderNode(b, c)
		}
	case nullChecks[n.Op]:
		elem(b, "k:MdrKey", n.MdrKey)
	case n.Op == "In":
		b.WriteString("<m:MultivalueAttribute>")
		elem(b, "k:MdrKey", n.MdrKey)
		for _, v := range n.Values {
			elem(b, "v:Value", v)
		}
		b.WriteString("</m:MultivalueAttribute>")
	case n.Op == "Between":
		b.WriteString("<r:RangeAttribute>")
		elem(b, "k:MdrKey", n.MdrKey)
		elem(b, "v:LowerBound", n.Values[0])
		elem(b, "v:UpperBound", n.Values[1])
		b.WriteString("</r:RangeAttribute>")
	default:
		b.WriteString("<a:Attribute>")
		elem(b, "k:MdrKey", n.MdrKey)
		elem(b, "v:Value", n.Values[0])
		b.WriteString("</a:Attribute>")
	}
	b.WriteString("</" + n.Op + ">")
}

func elem(b *strings.Builder, name, text string) {
	b.WriteString("<" + name + ">")
	escape(b, text)
	b.WriteString("</" + name + ">")
}

func escape(b *strings.Builder, s string) {
	_ = xml.EscapeText(b, []byte(s))
}

// Normalize parses doc and renders it in normal form.
func Normalize(doc []byte) (string, error) {
	q, err := Parse(doc)
	if err != nil {
		return "", err
	}
	return Render(q), nil
}
