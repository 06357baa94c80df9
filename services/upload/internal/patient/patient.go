// Package patient reads the patient document a site uploads, in the CCP
// patient model the connectors marshal with JAXB: every entity (Patient,
// Case, Sample, Container) has an id and holds Attributes, Containers and
// Refs; a Patient also holds Cases and Samples (a Case holds no Sample);
// Containers nest. An Attribute is one MdrKey with a Value (possibly empty
// or xsi:nil) or a LowerBound and/or UpperBound; a Ref lists EntityIds.
// Elements live in http://schema.samply.de/ccp/<their name>, except Ref
// and EntityId, which have no namespace.
//
// The reader streams tokens instead of unmarshalling, so that a byte limit
// and a depth limit hold before anything is built, and so that every
// refusal names what is wrong and where, for a plain-text 400.
package patient

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
)

// Parse reads one document from r.
func Parse(r io.Reader, lim Limits) (*Patient, error) {
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = 10 << 20
	}
	if lim.MaxDepth <= 0 {
		lim.MaxDepth = 32
	}
	lr := &limitReader{r: r, left: lim.MaxBytes}
	p := &parser{d: xml.NewDecoder(lr), lr: lr, maxDepth: lim.MaxDepth}
	pat, err := p.document()
	if lr.over {
		return nil, ErrTooLarge
	}
	return pat, err
}

// limitReader reads at most left bytes and remembers that the source had
// more, so the parser's error can be told from a truncated document.
type limitReader struct {
	r    io.Reader
	left int64
	over bool
}

func (l *limitReader) Read(b []byte) (int, error) {
	if l.left <= 0 {
		// Probe one byte: a document of exactly the limit is fine.
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			l.over = true
			return 0, ErrTooLarge
		}
		return 0, err
	}
	if int64(len(b)) > l.left {
		b = b[:l.left]
	}
	n, err := l.r.Read(b)
	l.left -= int64(n)
	return n, err
}

type parser struct {
	d        *xml.Decoder
	lr       *limitReader
	depth    int
	maxDepth int
}

// maxReason keeps a reason short enough for a plain-text 400 body and a
// log line, whatever the document echoed into it.
const maxReason = 200

func invalid(format string, a ...any) error {
	// Namespaces and decoder messages may carry newlines and unbounded
	// names from the document.
	r := strings.Map(func(c rune) rune {
		if unicode.IsControl(c) || c == '\u2028' || c == '\u2029' {
			return ' '
		}
		return c
	}, fmt.Sprintf(format, a...))
	if len(r) > maxReason {
		r = strings.ToValidUTF8(r[:maxReason-3], "") + "..."
	}
	return &InvalidError{Reason: r}
}

// clip shortens what the client sent before an error echoes it.
func clip(s string) string {
	if len(s) > 60 {
		s = strings.ToValidUTF8(s[:60], "") + "..."
	}
	return s
}

func quote(s string) string { return fmt.Sprintf("%q", clip(s)) }

// next returns the next token that matters: elements, end tags and text.
func (p *parser) next() (xml.Token, error) {
	for {
		tok, err := p.d.Token()
		if err != nil {
			if errors.Is(err, ErrTooLarge) || p.lr.over {
				return nil, ErrTooLarge
			}
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, invalid("malformed XML: %v", err)
		}
		switch t := tok.(type) {
		case xml.Comment, xml.ProcInst:
			continue
		case xml.Directive:
			return nil, invalid("DOCTYPE and other directives are not allowed")
		case xml.StartElement:
			p.depth++
			if p.depth > p.maxDepth {
				return nil, invalid("nesting deeper than %d elements", p.maxDepth)
			}
			return t.Copy(), nil
		case xml.EndElement:
			p.depth--
			return t, nil
		case xml.CharData:
			return t.Copy(), nil
		}
	}
}

func (p *parser) document() (*Patient, error) {
	for {
		tok, err := p.next()
		if errors.Is(err, io.EOF) {
			return nil, invalid("the document has no root element")
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.CharData:
			if len(strings.TrimSpace(string(t))) > 0 {
				return nil, invalid("text before the root element")
			}
		case xml.StartElement:
			if (t.Name.Local != "Patient" && t.Name.Local != "patient") || t.Name.Space != NSBase+"Patient" {
				return nil, invalid("root element must be Patient in namespace %sPatient, got %s", NSBase, name(t.Name))
			}
			pat := &Patient{
				Entity: Entity{ID: attr(t, "id")},
				DKTKID: attr(t, "dktk_id"), CentraxxID: attr(t, "centraxx_id"), IDType: attr(t, "idType"),
			}
			if pat.ID == "" {
				return nil, invalid("Patient without id")
			}
			if err := p.entity(&pat.Entity, "Patient "+quote(pat.ID), func(c xml.StartElement, where string) error {
				switch c.Name.Local {
				case "Case":
					cs, err := p.caseElem(c)
					pat.Cases = append(pat.Cases, cs)
					return err
				case "Sample":
					s, err := p.sample(c)
					pat.Samples = append(pat.Samples, s)
					return err
				}
				return errUnexpected
			}); err != nil {
				return nil, err
			}
			return pat, p.trailer()
		}
	}
}

// trailer allows only whitespace, comments and PIs after the root.
func (p *parser) trailer() error {
	for {
		tok, err := p.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if cd, ok := tok.(xml.CharData); ok && len(strings.TrimSpace(string(cd))) == 0 {
			continue
		}
		return invalid("content after the root element")
	}
}

var errUnexpected = errors.New("unexpected element")

func name(n xml.Name) string {
	if n.Space == "" {
		return clip(n.Local) + " (no namespace)"
	}
	return "{" + clip(n.Space) + "}" + clip(n.Local)
}

func attr(t xml.StartElement, local string) string {
	for _, a := range t.Attr {
		if a.Name.Local == local && a.Name.Space == "" {
			return a.Value
		}
	}
	return ""
}

// xsiNS is the namespace of xsi:nil.
const xsiNS = "http://www.w3.org/2001/XMLSchema-instance"

// inNamespace tells whether a child element is where the model puts it:
// in NSBase+<its name>, except Ref and EntityId, which JAXB writes without
// a namespace, and the bounds, which JAXB declares in Value's namespace
// (their own NSBase+<name> is accepted too, as earlier uploads used it).
func inNamespace(n xml.Name) bool {
	switch n.Local {
	case "Ref", "EntityId":
		return n.Space == ""
	case "LowerBound", "UpperBound":
		return n.Space == NSBase+"Value" || n.Space == NSBase+n.Local
	}
	return n.Space == NSBase+n.Local
}

func wantNamespace(local string) string {
	if local == "Ref" || local == "EntityId" {
		return "must have no namespace"
	}
	return "is not in namespace " + NSBase + clip(local)
}

// children reads the content of the element just opened up to its end tag:
// only whitespace and child elements, each in its namespace (inNamespace)
// and handled by fn (errUnexpected for a name fn does not take).
func (p *parser) children(where string, fn func(c xml.StartElement, where string) error) error {
	for {
		tok, err := p.next()
		if errors.Is(err, io.EOF) {
			return invalid("malformed XML: unexpected end of document in %s", where)
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return nil
		case xml.CharData:
			if len(strings.TrimSpace(string(t))) > 0 {
				return invalid("unexpected text in %s", where)
			}
		case xml.StartElement:
			if !inNamespace(t.Name) {
				return invalid("element %s in %s %s", name(t.Name), where, wantNamespace(t.Name.Local))
			}
			if err := fn(t, where); err != nil {
				if errors.Is(err, errUnexpected) {
					return invalid("unexpected element %s in %s", clip(t.Name.Local), where)
				}
				return err
			}
		}
	}
}

// entity reads what every entity holds (Attribute, Container, Ref) and
// hands any other child to more. The model orders them (Attribute*,
// Container*, Ref*, then a Patient's Case* and Sample*); JAXB always
// writes them in that order, so any order is taken rather than checked.
func (p *parser) entity(e *Entity, where string, more func(c xml.StartElement, where string) error) error {
	return p.children(where, func(c xml.StartElement, where string) error {
		switch c.Name.Local {
		case "Attribute":
			a, err := p.attribute(where)
			e.Attributes = append(e.Attributes, a)
			return err
		case "Container":
			cc, err := p.container(c)
			e.Containers = append(e.Containers, cc)
			return err
		case "Ref":
			r, err := p.ref(where)
			e.Refs = append(e.Refs, r)
			return err
		}
		if more == nil {
			return errUnexpected
		}
		return more(c, where)
	})
}

func (p *parser) caseElem(t xml.StartElement) (Case, error) {
	c := Case{Entity{ID: attr(t, "id")}}
	if c.ID == "" {
		return c, invalid("Case without id")
	}
	err := p.entity(&c.Entity, "Case "+quote(c.ID), func(ch xml.StartElement, where string) error {
		if ch.Name.Local == "Sample" {
			// The model has no Sample in a Case; saying where it belongs
			// helps the site more than "unexpected".
			return invalid("unexpected element Sample in %s: a Sample belongs directly in the Patient", where)
		}
		return errUnexpected
	})
	return c, err
}

func (p *parser) sample(t xml.StartElement) (Sample, error) {
	s := Sample{Entity{ID: attr(t, "id")}}
	if s.ID == "" {
		return s, invalid("Sample without id")
	}
	err := p.entity(&s.Entity, "Sample "+quote(s.ID), nil)
	return s, err
}

// container reads a Container. The schema requires id and designation,
// but JAXB writes whatever the site's data has, so a container without
// them is kept rather than costing the whole patient.
func (p *parser) container(t xml.StartElement) (Container, error) {
	c := Container{Entity: Entity{ID: attr(t, "id")}, Designation: attr(t, "designation")}
	err := p.entity(&c.Entity, "Container"+c.label(), nil)
	return c, err
}

func (c Container) label() string {
	switch {
	case c.ID != "":
		return " " + quote(c.ID)
	case c.Designation != "":
		return " " + quote(c.Designation)
	}
	return ""
}

// ref reads a Ref: EntityId elements, each the id of another entity.
func (p *parser) ref(where string) (Ref, error) {
	var r Ref
	err := p.children("Ref in "+where, func(ch xml.StartElement, where string) error {
		if ch.Name.Local != "EntityId" {
			return errUnexpected
		}
		id, err := p.text("EntityId in " + where)
		r.EntityIDs = append(r.EntityIDs, id)
		return err
	})
	return r, err
}

func isNil(t xml.StartElement) bool {
	for _, a := range t.Attr {
		// An undeclared xsi prefix keeps its name as the space.
		if a.Name.Local == "nil" && (a.Name.Space == xsiNS || a.Name.Space == "xsi") {
			v := strings.TrimSpace(a.Value)
			return v == "true" || v == "1"
		}
	}
	return false
}

func (p *parser) attribute(where string) (Attribute, error) {
	var a Attribute
	hasKey := false
	err := p.children("Attribute in "+where, func(ch xml.StartElement, _ string) error {
		var into *string
		switch ch.Name.Local {
		case "MdrKey":
			if hasKey {
				return invalid("Attribute with more than one MdrKey in %s", where)
			}
			hasKey, into = true, &a.MdrKey
		case "Value":
			if a.HasValue {
				return invalid("Attribute with more than one Value in %s", where)
			}
			a.HasValue, a.Nil, into = true, isNil(ch), &a.Value
		case "LowerBound":
			if a.LowerBound != nil {
				return invalid("Attribute with more than one LowerBound in %s", where)
			}
			a.LowerBound = new(string)
			into = a.LowerBound
		case "UpperBound":
			if a.UpperBound != nil {
				return invalid("Attribute with more than one UpperBound in %s", where)
			}
			a.UpperBound = new(string)
			into = a.UpperBound
		default:
			return errUnexpected
		}
		s, err := p.text(ch.Name.Local + " in " + where)
		*into = s
		return err
	})
	if err != nil {
		return a, err
	}
	a.MdrKey = strings.TrimSpace(a.MdrKey)
	if a.MdrKey == "" {
		return a, invalid("Attribute without MdrKey in %s", where)
	}
	if !a.HasValue && a.LowerBound == nil && a.UpperBound == nil {
		return a, invalid("Attribute without Value (MdrKey %s) in %s", clip(a.MdrKey), where)
	}
	if a.HasValue && (a.LowerBound != nil || a.UpperBound != nil) {
		return a, invalid("Attribute %s with both a Value and bounds in %s", clip(a.MdrKey), where)
	}
	if a.Nil && a.Value != "" {
		return a, invalid("Attribute %s has a Value marked xsi:nil with text in %s", clip(a.MdrKey), where)
	}
	return a, nil
}

// text reads the text of a leaf element up to its end tag.
func (p *parser) text(where string) (string, error) {
	var b strings.Builder
	for {
		tok, err := p.next()
		if errors.Is(err, io.EOF) {
			return "", invalid("malformed XML: unexpected end of document in %s", where)
		}
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return strings.TrimSpace(b.String()), nil
		case xml.CharData:
			b.Write(t)
		case xml.StartElement:
			return "", invalid("unexpected element %s in %s", clip(t.Name.Local), where)
		}
	}
}
