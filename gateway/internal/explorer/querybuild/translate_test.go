package querybuild

import (
	"slices"
	"testing"

	"fris.dev/pkg/samplyquery"
	mdrv1 "fris.dev/proto/mdr/v1"
)

// TestElementOf: the builder's condition for each kind of data element.
func TestElementOf(t *testing.T) {
	for urn, want := range map[string]Element{
		urnEnum: {Kind: KindEnum},
		urnAge:  {Kind: KindNumber, InputType: "number", Step: "1", Min: "0", Max: "120"},
		urnDate: {Kind: KindDate, InputType: "date", DateFmt: "02.01.2006", Format: "DIN_5008_WITH_DAYS"},
		urnICD:  {Kind: KindText},
	} {
		e := ElementOf(urn, elements[urn], "de")
		if e.Kind != want.Kind || e.InputType != want.InputType || e.Step != want.Step || e.Min != want.Min || e.Max != want.Max ||
			e.DateFmt != want.DateFmt || e.Format != want.Format {
			t.Errorf("%s: %+v, want %+v", urn, e, want)
		}
		if e.URN != urn || e.Label.Text == "" || e.Label.Lang != "" {
			t.Errorf("%s: label %+v in German", urn, e.Label)
		}
	}
	if e := ElementOf(urnEnum, elements[urnEnum], "en"); len(e.Options) != 1 || e.Options[0].Value != "tissue_frozen" || e.Options[0].Meaning.Text != "Tissue snap frozen" {
		t.Errorf("options %+v", e.Options)
	}
	// An enumeration without values takes text conditions.
	if e := ElementOf("urn:a:dataelement:1:1", &mdrv1.DataElement{Validation: &mdrv1.Validation{Datatype: "enumerated", ValueDomainType: "ENUMERATED"}}, "en"); e.Kind != KindText || e.Label.Text != "urn:a:dataelement:1:1" {
		t.Errorf("empty enumeration: %+v", e)
	}
}

// TestConditionNodes: each kind of condition, as the form holds it, in
// the query language's terms.
func TestConditionNodes(t *testing.T) {
	el := func(urn string) *Element { return ElementOf(urn, elements[urn], "en") }
	for _, c := range []struct {
		name   string
		cond   Cond
		op     string
		values []string
		none   bool
	}{
		{"no value chosen", Cond{El: el(urnEnum)}, "IsNotNull", nil, false},
		{"one value", Cond{El: el(urnEnum), Values: []string{"a", ""}}, "Eq", []string{"a"}, false},
		{"values", Cond{El: el(urnEnum), Values: []string{"a", "b"}}, "In", []string{"a", "b"}, false},
		{"range", Cond{El: el(urnAge), From: "1", To: "2"}, "Between", []string{"1", "2"}, false},
		{"a point", Cond{El: el(urnAge), From: "3", To: "3"}, "Eq", []string{"3"}, false},
		{"from", Cond{El: el(urnAge), From: "3"}, "Geq", []string{"3"}, false},
		{"to", Cond{El: el(urnAge), To: "3"}, "Leq", []string{"3"}, false},
		{"no range", Cond{El: el(urnAge)}, "IsNotNull", nil, false},
		{"dates in the registry's format", Cond{El: el(urnDate), From: "2020-01-31", To: "2021-02-01"}, "Between", []string{"31.01.2020", "01.02.2021"}, false},
		{"equal", Cond{El: el(urnICD), Op: "eq", Values: []string{"C34"}}, "Eq", []string{"C34"}, false},
		{"not equal", Cond{El: el(urnICD), Op: "neq", Values: []string{"C34"}}, "Neq", []string{"C34"}, false},
		{"contains", Cond{El: el(urnICD), Op: "like", Values: []string{"C34"}}, "Like", []string{"%C34%"}, false},
		{"one of", Cond{El: el(urnICD), Op: "in", Values: []string{"C34; C35\nC36,"}}, "In", []string{"C34", "C35", "C36"}, false},
		{"one of one", Cond{El: el(urnICD), Op: "in", Values: []string{" C34 "}}, "Eq", []string{"C34"}, false},
		{"any", Cond{El: el(urnICD), Op: "any"}, "IsNotNull", nil, false},
		{"empty text", Cond{El: el(urnICD), Op: "eq"}, "", nil, true},
		{"empty list", Cond{El: el(urnICD), Op: "in", Values: []string{" , "}}, "", nil, true},
		{"not a value", Cond{El: el(urnEnum), Op: "notin", Values: []string{"a"}}, "Neq", []string{"a"}, false},
		{"none of the values", Cond{El: el(urnEnum), Op: "notin", Values: []string{"a", "b"}}, "And", nil, false},
		{"none of nothing", Cond{El: el(urnEnum), Op: "notin"}, "", nil, true},
		{"a pick list without value", Cond{El: el(urnEnum), Op: "none", Values: []string{"a"}}, "IsNull", nil, false},
		{"a range without value", Cond{El: el(urnAge), Op: "none", From: "1"}, "IsNull", nil, false},
		{"a range with any value", Cond{El: el(urnDate), Op: "any", To: "2020-01-01"}, "IsNotNull", nil, false},
		{"a text without value", Cond{El: el(urnICD), Op: "none"}, "IsNull", nil, false},
		{"a text none of", Cond{El: el(urnICD), Op: "notin", Values: []string{"C34, C35"}}, "And", nil, false},
		{"a range's operator on a pick list", Cond{El: el(urnEnum), Op: "range", Values: []string{"a"}}, "Eq", []string{"a"}, false},
		{"a text's operator on a range", Cond{El: el(urnAge), Op: "like", From: "2"}, "Geq", []string{"2"}, false},
	} {
		n, ok := c.cond.node()
		if !ok != c.none {
			t.Errorf("%s: asks something %v, want %v", c.name, ok, !c.none)
			continue
		}
		if ok && (n.Op != c.op || !slices.Equal(n.Values, c.values)) {
			t.Errorf("%s: %s %q, want %s %q", c.name, n.Op, n.Values, c.op, c.values)
		}
	}
}

// TestChecks: the values the registry is asked about, and ranges out of
// order.
func TestChecks(t *testing.T) {
	el := func(urn string) *Element { return ElementOf(urn, elements[urn], "en") }
	for _, c := range []struct {
		cond Cond
		want []string
	}{
		{Cond{El: el(urnEnum), Values: []string{"a", "b"}}, []string{"a", "b"}},
		{Cond{El: el(urnAge), To: "5"}, []string{"5"}},
		{Cond{El: el(urnDate), From: "2020-01-31"}, []string{"31.01.2020"}},
		{Cond{El: el(urnICD), Op: "eq", Values: []string{"C34"}}, []string{"C34"}},
		{Cond{El: el(urnICD), Op: "in", Values: []string{"C34, C35"}}, []string{"C34", "C35"}},
		// A part of a value is not a value.
		{Cond{El: el(urnICD), Op: "like", Values: []string{"C3"}}, nil},
		// "is not" checks its values; "has no value" has none.
		{Cond{El: el(urnICD), Op: "notin", Values: []string{"C34; C35"}}, []string{"C34", "C35"}},
		{Cond{El: el(urnEnum), Op: "notin", Values: []string{"a"}}, []string{"a"}},
		{Cond{El: el(urnEnum), Op: "none", Values: []string{"a"}}, nil},
		{Cond{El: el(urnAge), Op: "any", From: "1"}, nil},
	} {
		if got := c.cond.Checks(); !slices.Equal(got, c.want) {
			t.Errorf("%+v: checks %q, want %q", c.cond, got, c.want)
		}
	}
	if !(&Cond{El: el(urnAge), From: "10", To: "9.5"}).OutOfOrder() {
		t.Error("10 to 9.5 is in order")
	}
	for _, c := range []struct {
		cond    Cond
		missing bool
	}{
		{Cond{El: el(urnICD), Op: "eq"}, true},
		{Cond{El: el(urnICD), Op: "notin", Values: []string{" ; "}}, true},
		{Cond{El: el(urnICD), Op: "none"}, false},
		{Cond{El: el(urnEnum), Op: "notin"}, true},
		{Cond{El: el(urnEnum), Op: "in"}, false},
		{Cond{El: el(urnAge)}, false},
	} {
		if c.cond.Missing() != c.missing {
			t.Errorf("%+v: missing %v", c.cond, !c.missing)
		}
	}
	if (&Cond{El: el(urnAge), From: "9", To: "10"}).OutOfOrder() || (&Cond{El: el(urnICD), From: "b", To: "a"}).OutOfOrder() {
		t.Error("a range in order, or a text, is out of order")
	}
}

// TestCondOf: a stored condition read back into the builder's fields, or
// refused when the builder has no field for it.
func TestCondOf(t *testing.T) {
	el := func(urn string) *Element { return ElementOf(urn, elements[urn], "en") }
	node := func(op string, vs ...string) *samplyquery.Node { return &samplyquery.Node{Op: op, Values: vs} }
	for _, c := range []struct {
		name     string
		n        *samplyquery.Node
		e        *Element
		op       string
		values   []string
		from, to string
		refused  bool
	}{
		{"a date range", node("Between", "31.01.2020", "01.02.2021"), el(urnDate), "", nil, "2020-01-31", "2021-02-01", false},
		{"up to", node("Leq", "7"), el(urnAge), "", nil, "", "7", false},
		{"any text", node("IsNotNull"), el(urnICD), "any", nil, "", "", false},
		{"a list", node("In", "a", "b"), el(urnICD), "in", []string{"a, b"}, "", "", false},
		{"contains", node("Like", "%C3%"), el(urnICD), "like", []string{"C3"}, "", "", false},
		{"a pattern", node("Like", "%C%3%"), el(urnICD), "", nil, "", "", true},
		{"a range of a pick list", node("Between", "a", "b"), el(urnEnum), "", nil, "", "", true},
		{"greater than", node("Gt", "3"), el(urnAge), "", nil, "", "", true},
		{"no value", node("IsNull"), el(urnAge), "none", nil, "", "", false},
		{"any value of a pick list", node("IsNotNull"), el(urnEnum), "any", nil, "", "", false},
		{"not a value", node("Neq", "a"), el(urnEnum), "notin", []string{"a"}, "", "", false},
		{"not a number", node("Neq", "3"), el(urnAge), "", nil, "", "", true},
		{"a group", &samplyquery.Node{Op: "Or", Children: []*samplyquery.Node{node("Eq", "a"), node("Eq", "b")}}, el(urnEnum), "", nil, "", "", true},
	} {
		got, ok := CondOf(c.n, c.e)
		if ok == c.refused {
			t.Errorf("%s: read %v, want %v", c.name, ok, !c.refused)
			continue
		}
		if ok && (got.Op != c.op || !slices.Equal(got.Values, c.values) || got.From != c.from || got.To != c.to) {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
}
