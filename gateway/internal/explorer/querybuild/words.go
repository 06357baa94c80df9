package querybuild

import (
	"fmt"
	"strings"

	"fris.dev/gateway/internal/explorer/mdrtext"
	"fris.dev/gateway/internal/i18n"
	"fris.dev/pkg/samplyquery"
)

// A query in words: each condition a chip ("Gender: female", "Age: 18–65",
// "Diagnosis is not C50"), joined by "and" and "or", groups bracketed, in
// the page's language, from the registry's designations and the meanings
// of permissible values. The texts are plain; the templates escape them.

// Sentence is a query in words.
type Sentence struct {
	Parts []Part
	// Unreadable: the query is not one the words can say (it did not
	// parse); the pages show its XML only.
	Unreadable bool
}

// Part is a chip or a bracketed group, with the word joining it to the
// part before ("" for the first).
type Part struct {
	Join  string
	Chip  *Chip
	Group []Part
}

// Chip is one condition in words: the data element's designation, and
// what is asked of it.
type Chip struct {
	Label mdrtext.Label
	// Rest follows the designation: ": female", " is not C50".
	Rest string
	// Cond is the builder's condition, which the chip can remove; empty
	// outside the builder.
	Cond string
	// RemoveLabel names the chip's remove button for screen readers.
	RemoveLabel string
}

// Text is the chip as one text.
func (c *Chip) Text() string { return c.Label.Text + c.Rest }

// Elements are the data elements a query names, by URN; one that is
// missing (the registry has none) is said by its URN.
type Elements map[string]*Element

// Empty reports a query without conditions: every donor matches.
func (s Sentence) Empty() bool { return len(s.Parts) == 0 && !s.Unreadable }

// String is the sentence as plain text, for a CSV file or a title.
func (s Sentence) String() string {
	var b strings.Builder
	writeParts(&b, s.Parts)
	return b.String()
}

func writeParts(b *strings.Builder, ps []Part) {
	for _, p := range ps {
		if p.Join != "" {
			b.WriteString(" " + p.Join + " ")
		}
		if p.Chip != nil {
			b.WriteString(p.Chip.Text())
			continue
		}
		b.WriteString("(")
		writeParts(b, p.Group)
		b.WriteString(")")
	}
}

// words says queries in one language.
type words struct {
	l   i18n.Lang
	els Elements
}

func (w words) t(key string, args ...any) string {
	s := wordsCatalogue.Text(w.l, key)
	if len(args) > 0 {
		return fmt.Sprintf(s, args...)
	}
	return s
}

// join is the word for a group's operator.
func (w words) join(op string) string {
	if op == "Or" {
		return w.t("qw.or")
	}
	return w.t("qw.and")
}

// WordsOf says a stored query in l. A query that does not parse is
// Unreadable; an element els lacks is said by its URN.
func WordsOf(doc string, els Elements, l i18n.Lang) Sentence {
	q, err := samplyquery.Parse([]byte(doc))
	if err != nil {
		return Sentence{Unreadable: true}
	}
	return WordsOfQuery(q, els, l)
}

// WordsOfQuery says a parsed query in l.
func WordsOfQuery(q *samplyquery.Query, els Elements, l i18n.Lang) Sentence {
	w := words{l: l, els: els}
	// The Where joins its conditions by And; a single group in it needs
	// no brackets.
	top, op := q.Where.Children, "And"
	if len(top) == 1 && isGroup(top[0]) {
		top, op = top[0].Children, top[0].Op
	}
	return Sentence{Parts: w.parts(top, op)}
}

// KeysOf lists the data elements a query names, once each, in order.
func KeysOf(q *samplyquery.Query) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(n *samplyquery.Node)
	walk = func(n *samplyquery.Node) {
		if n.MdrKey != "" && !seen[n.MdrKey] {
			seen[n.MdrKey] = true
			out = append(out, n.MdrKey)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(q.Where)
	return out
}

func (w words) parts(ns []*samplyquery.Node, op string) []Part {
	var out []Part
	for _, n := range ns {
		p := w.part(n)
		if len(out) > 0 {
			p.Join = w.join(op)
		}
		out = append(out, p)
	}
	return out
}

// part is a condition's chip, or a group's bracketed parts; a group of
// one condition is that condition, an empty one the chip "no condition".
func (w words) part(n *samplyquery.Node) Part {
	if !isGroup(n) {
		return Part{Chip: w.chip(n)}
	}
	switch len(n.Children) {
	case 0:
		return Part{Chip: &Chip{Label: mdrtext.Label{Text: w.t("qw.nothing")}}}
	case 1:
		return w.part(n.Children[0])
	}
	return Part{Group: w.parts(n.Children, n.Op)}
}

// chip says a condition: its element's designation, then what it asks.
func (w words) chip(n *samplyquery.Node) *Chip {
	urn := KeyOf(n)
	e := w.els[urn]
	c := &Chip{Label: mdrtext.Label{Text: urn}}
	if e != nil && e.Label.Text != "" {
		c.Label = e.Label
	}
	vs := noneValues(n)
	vals := func() string { return w.list(e, vs) }
	unit := func(s string) string {
		if e != nil && e.Unit != "" {
			return s + " " + e.Unit
		}
		return s
	}
	switch n.Op {
	case "Eq", "In":
		c.Rest = w.t("qw.is", unit(vals()))
	case "Neq":
		c.Rest = w.t("qw.not", unit(vals()))
	case "And":
		c.Rest = w.t("qw.notin", unit(vals()))
	case "Between":
		c.Rest = w.t("qw.between", w.value(e, vs[0]), unit(w.value(e, vs[1])))
	case "Geq":
		c.Rest = w.t("qw.geq", unit(w.value(e, vs[0])))
	case "Gt":
		c.Rest = w.t("qw.gt", unit(w.value(e, vs[0])))
	case "Leq":
		c.Rest = w.t("qw.leq", unit(w.value(e, vs[0])))
	case "Lt":
		c.Rest = w.t("qw.lt", unit(w.value(e, vs[0])))
	case "Like":
		v := vs[0]
		if inner := strings.TrimSuffix(strings.TrimPrefix(v, "%"), "%"); len(v) >= 2 && len(inner) == len(v)-2 && !strings.Contains(inner, "%") {
			c.Rest = w.t("qw.contains", inner)
		} else {
			c.Rest = w.t("qw.like", v)
		}
	case "IsNull":
		c.Rest = w.t("qw.null")
	case "IsNotNull":
		c.Rest = w.t("qw.notnull")
	}
	return c
}

// value is a value as the page says it: a permissible value's meaning,
// else the value itself.
func (w words) value(e *Element, v string) string {
	if e == nil {
		return v
	}
	for _, o := range e.Options {
		if o.Value == v && o.Meaning.Text != "" {
			return o.Meaning.Text
		}
	}
	return v
}

// list says values, separated by commas: a chip's "or" would read as
// one between chips.
func (w words) list(e *Element, vs []string) string {
	said := make([]string, len(vs))
	for i, v := range vs {
		said[i] = w.value(e, v)
	}
	return strings.Join(said, ", ")
}

// Words says the builder's query as it stands, each chip naming its
// condition so that the page can offer to remove it; a builder without
// conditions says the query it keeps. The conditions' El must be set.
func (b *Builder) Words(l i18n.Lang) Sentence {
	if b.Conditions() == 0 && b.Kept != "" {
		return WordsOf(b.Kept, nil, l)
	}
	w := words{l: l, els: Elements{}}
	var groups [][]Part
	for _, g := range b.Groups {
		var ps []Part
		for _, c := range g.Conds {
			n, ok := c.node()
			if !ok {
				continue
			}
			w.els[c.URN] = c.El
			p := Part{Chip: w.chip(n)}
			p.Chip.Cond = c.ID
			p.Chip.RemoveLabel = w.t("qw.remove", p.Chip.Text())
			if len(ps) > 0 {
				p.Join = w.join(g.Op)
			}
			ps = append(ps, p)
		}
		if len(ps) > 0 {
			groups = append(groups, ps)
		}
	}
	// As Query writes it: one group unbracketed, several joined by the
	// builder's operator, each of more than one condition bracketed.
	if len(groups) == 1 {
		return Sentence{Parts: groups[0]}
	}
	var s Sentence
	for i, ps := range groups {
		p := Part{Group: ps}
		if len(ps) == 1 {
			p = ps[0]
		}
		p.Join = ""
		if i > 0 {
			p.Join = w.join(b.Op)
		}
		s.Parts = append(s.Parts, p)
	}
	return s
}

// wordsCatalogue has the words of queries; Rest texts begin with what
// follows the designation.
var wordsCatalogue = i18n.Catalogue{
	"qw.and":      {i18n.English: "and", i18n.German: "und"},
	"qw.or":       {i18n.English: "or", i18n.German: "oder"},
	"qw.is":       {i18n.English: ": %s", i18n.German: ": %s"},
	"qw.not":      {i18n.English: " is not %s", i18n.German: " ist nicht %s"},
	"qw.notin":    {i18n.English: " is none of %s", i18n.German: " ist keiner von %s"},
	"qw.between":  {i18n.English: ": %s\u2013%s", i18n.German: ": %s\u2013%s"},
	"qw.geq":      {i18n.English: ": at least %s", i18n.German: ": mindestens %s"},
	"qw.gt":       {i18n.English: ": more than %s", i18n.German: ": mehr als %s"},
	"qw.leq":      {i18n.English: ": at most %s", i18n.German: ": höchstens %s"},
	"qw.lt":       {i18n.English: ": less than %s", i18n.German: ": weniger als %s"},
	"qw.contains": {i18n.English: " contains %s", i18n.German: " enthält %s"},
	"qw.like":     {i18n.English: " matches the pattern %s", i18n.German: " passt zum Muster %s"},
	"qw.null":     {i18n.English: " has no value", i18n.German: " hat keinen Wert"},
	"qw.notnull":  {i18n.English: " has any value", i18n.German: " hat einen Wert"},
	"qw.nothing":  {i18n.English: "no condition", i18n.German: "keine Bedingung"},
	"qw.remove":   {i18n.English: "Remove the condition %s", i18n.German: "Bedingung %s entfernen"},
}
