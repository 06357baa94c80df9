// Package patient reads the patient document a site uploads: Patient (or
// patient) with Attributes, Cases and Samples; Cases with Attributes and
// Samples; Samples with Attributes and Containers; Containers (nested, with
// a designation) with Attributes and Containers; an Attribute is one MdrKey
// with a Value or a LowerBound and/or UpperBound. Every element lives in
// the namespace http://schema.samply.de/ccp/<its name>.
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

// NSBase is the namespace prefix of every element: NSBase + "Patient" etc.
const NSBase = "http://schema.samply.de/ccp/"

// Limits bound one document; zero fields take the defaults.
type Limits struct {
	MaxBytes int64 // default 10 MiB
	MaxDepth int   // default 32
}

// ErrTooLarge: the document has more than Limits.MaxBytes bytes.
var ErrTooLarge = errors.New("patient document too large")

// InvalidError is a document that is not a patient document; Reason says
// why, in one line for the client.
type InvalidError struct{ Reason string }

func (e *InvalidError) Error() string { return e.Reason }

// Attribute is one data element's value, or the bounds of a range.
type Attribute struct {
	MdrKey string
	Value  string
	// HasValue tells an empty Value from none (bounds only).
	HasValue               bool
	LowerBound, UpperBound *string
}

// Container holds samples' parts (a box, a tube) and may nest.
type Container struct {
	ID, Designation string
	Attributes      []Attribute
	Containers      []Container
}

// Sample is one biosample.
type Sample struct {
	ID         string
	Attributes []Attribute
	Containers []Container
}

// Case is one episode of care.
type Case struct {
	ID         string
	Attributes []Attribute
	Samples    []Sample
}

// Patient is a parsed document.
type Patient struct {
	ID         string
	Attributes []Attribute
	Cases      []Case
	Samples    []Sample
}

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
			pat := &Patient{ID: attr(t, "id")}
			if pat.ID == "" {
				return nil, invalid("Patient without id")
			}
			if err := p.children("Patient "+quote(pat.ID), func(c xml.StartElement, where string) error {
				switch c.Name.Local {
				case "Attribute":
					a, err := p.attribute(where)
					pat.Attributes = append(pat.Attributes, a)
					return err
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

// children reads the content of the element just opened up to its end tag:
// only whitespace and child elements, each in its own ccp namespace and
// handled by fn (errUnexpected for a name fn does not take).
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
			if t.Name.Space != NSBase+t.Name.Local {
				return invalid("element %s in %s is not in namespace %s%s", name(t.Name), where, NSBase, clip(t.Name.Local))
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

func (p *parser) caseElem(t xml.StartElement) (Case, error) {
	c := Case{ID: attr(t, "id")}
	if c.ID == "" {
		return c, invalid("Case without id")
	}
	err := p.children("Case "+quote(c.ID), func(ch xml.StartElement, where string) error {
		switch ch.Name.Local {
		case "Attribute":
			a, err := p.attribute(where)
			c.Attributes = append(c.Attributes, a)
			return err
		case "Sample":
			s, err := p.sample(ch)
			c.Samples = append(c.Samples, s)
			return err
		}
		return errUnexpected
	})
	return c, err
}

func (p *parser) sample(t xml.StartElement) (Sample, error) {
	s := Sample{ID: attr(t, "id")}
	if s.ID == "" {
		return s, invalid("Sample without id")
	}
	err := p.children("Sample "+quote(s.ID), func(ch xml.StartElement, where string) error {
		switch ch.Name.Local {
		case "Attribute":
			a, err := p.attribute(where)
			s.Attributes = append(s.Attributes, a)
			return err
		case "Container":
			c, err := p.container(ch)
			s.Containers = append(s.Containers, c)
			return err
		}
		return errUnexpected
	})
	return s, err
}

func (p *parser) container(t xml.StartElement) (Container, error) {
	c := Container{ID: attr(t, "id"), Designation: attr(t, "designation")}
	where := "Container"
	if c.ID != "" {
		where += " " + quote(c.ID)
	} else if c.Designation != "" {
		where += " " + quote(c.Designation)
	}
	err := p.children(where, func(ch xml.StartElement, where string) error {
		switch ch.Name.Local {
		case "Attribute":
			a, err := p.attribute(where)
			c.Attributes = append(c.Attributes, a)
			return err
		case "Container":
			cc, err := p.container(ch)
			c.Containers = append(c.Containers, cc)
			return err
		}
		return errUnexpected
	})
	return c, err
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
			a.HasValue, into = true, &a.Value
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

// Counts are the numbers of cases, samples and attributes anywhere.
func (p *Patient) Counts() (cases, samples, attributes int) {
	cases = len(p.Cases)
	attributes = len(p.Attributes)
	var container func(c Container)
	container = func(c Container) {
		attributes += len(c.Attributes)
		for _, cc := range c.Containers {
			container(cc)
		}
	}
	sample := func(s Sample) {
		samples++
		attributes += len(s.Attributes)
		for _, c := range s.Containers {
			container(c)
		}
	}
	for _, c := range p.Cases {
		attributes += len(c.Attributes)
		for _, s := range c.Samples {
			sample(s)
		}
	}
	for _, s := range p.Samples {
		sample(s)
	}
	return cases, samples, attributes
}

// Value is one value to check against the registry. Where names its
// place for people (`case "c1"`); Kind is Value, LowerBound or UpperBound.
type Value struct {
	Where, MdrKey, Kind, Text string
}

// Values lists every value and bound in document order (Patient's own
// attributes, then its cases with their samples, then its samples).
func (p *Patient) Values() []Value {
	var out []Value
	add := func(where string, as []Attribute) {
		for _, a := range as {
			if a.HasValue {
				out = append(out, Value{Where: where, MdrKey: a.MdrKey, Kind: "Value", Text: a.Value})
			}
			if a.LowerBound != nil {
				out = append(out, Value{Where: where, MdrKey: a.MdrKey, Kind: "LowerBound", Text: *a.LowerBound})
			}
			if a.UpperBound != nil {
				out = append(out, Value{Where: where, MdrKey: a.MdrKey, Kind: "UpperBound", Text: *a.UpperBound})
			}
		}
	}
	var container func(c Container)
	container = func(c Container) {
		where := "container"
		if c.ID != "" {
			where += " " + quote(c.ID)
		} else if c.Designation != "" {
			where += " " + quote(c.Designation)
		}
		add(where, c.Attributes)
		for _, cc := range c.Containers {
			container(cc)
		}
	}
	sample := func(s Sample) {
		add("sample "+quote(s.ID), s.Attributes)
		for _, c := range s.Containers {
			container(c)
		}
	}
	add("patient "+quote(p.ID), p.Attributes)
	for _, c := range p.Cases {
		add("case "+quote(c.ID), c.Attributes)
		for _, s := range c.Samples {
			sample(s)
		}
	}
	for _, s := range p.Samples {
		sample(s)
	}
	return out
}
