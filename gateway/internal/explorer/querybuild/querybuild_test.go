package querybuild

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"fris.dev/pkg/samplyquery"
	mdrv1 "fris.dev/proto/mdr/v1"
)

// Data elements of the tests, one of each kind.
const (
	urnEnum = "urn:mdr16:dataelement:15:1"
	urnAge  = "urn:mdr16:dataelement:14:1"
	urnDate = "urn:mdr16:dataelement:26:1"
	urnICD  = "urn:mdr16:dataelement:27:1"
)

func ds(en, de string) []*mdrv1.Designation {
	return []*mdrv1.Designation{{Lang: "de", Designation: de, Definition: de + " (Definition)"}, {Lang: "en", Designation: en, Definition: en + " (definition)"}}
}

// elements are the registry's answers for the tests' data elements.
var elements = map[string]*mdrv1.DataElement{
	urnEnum: {Designations: ds("Sample type tissue", "Materialart Gewebe"),
		Validation: &mdrv1.Validation{Datatype: "enumerated", ValueDomainType: "ENUMERATED", PermissibleValues: []*mdrv1.PermissibleValue{
			{Value: "tissue_frozen", Meanings: ds("Tissue snap frozen", "Gewebe schockgefroren")}}}},
	urnAge: {Designations: ds("Donor age", "Spenderalter"),
		Validation: &mdrv1.Validation{Datatype: "INTEGER", ValidationType: "INTEGERRANGE", ValidationData: "0<=x<=120"}},
	urnDate: {Designations: ds("Date of diagnosis", "Diagnosedatum"),
		Validation: &mdrv1.Validation{Datatype: "DATE", ValidationType: "DATE", ValidationData: "DIN_5008_WITH_DAYS"}},
	urnICD: {Designations: ds("Diagnosis ICD-10", "Diagnose ICD-10"), Validation: &mdrv1.Validation{Datatype: "STRING"}},
}

// builderFields is the builder's part of a complete inquiry form: a group
// of an age range and a pick list, OR a group with a date range and an
// ICD-10 list.
func builderFields() url.Values {
	return url.Values{
		"qb.ns": {"mdr16"}, "qb.op": {"Or"}, "qb.group": {"g1", "g2"}, "qb.g.g1.op": {"And"}, "qb.g.g2.op": {"And"},
		"qb.cond":     {"g1.c1", "g1.c2", "g2.c3", "g2.c4"},
		"qb.c.c1.urn": {urnAge}, "qb.c.c1.from": {"18"}, "qb.c.c1.to": {"99"},
		"qb.c.c2.urn": {urnEnum}, "qb.c.c2.v": {"tissue_frozen"},
		"qb.c.c3.urn": {urnDate}, "qb.c.c3.from": {"2020-01-01"},
		"qb.c.c4.urn": {urnICD}, "qb.c.c4.op": {"in"}, "qb.c.c4.v": {"C34.0, C34.1"},
	}
}

// TestBuilderShapes: queries the builder writes read back into the same
// builder; others are kept as they are.
func TestBuilderShapes(t *testing.T) {
	els := map[string]*Element{}
	for urn, de := range elements {
		els[urn] = ElementOf(urn, de, "en")
	}
	settle := func(b *Builder) {
		for _, g := range b.Groups {
			for _, c := range g.Conds {
				c.El = els[c.URN]
			}
		}
	}
	for _, form := range []url.Values{
		builderFields(),
		{"qb.group": {"a"}, "qb.cond": {"a.x"}, "qb.c.x.urn": {urnICD}, "qb.c.x.op": {"like"}, "qb.c.x.v": {"C34"}},
		{"qb.group": {"a"}, "qb.cond": {"a.x"}, "qb.c.x.urn": {urnAge}, "qb.c.x.to": {"40"}},
		{"qb.group": {"a"}, "qb.cond": {"a.x", "a.y"}, "qb.g.a.op": {"Or"}, "qb.c.x.urn": {urnICD}, "qb.c.x.op": {"any"}, "qb.c.y.urn": {urnEnum}},
		{"qb.group": {"a"}},
		{"qb.group": {"a", "b"}, "qb.cond": {"a.x", "a.y", "b.z"}, "qb.g.a.op": {"Or"}, "qb.c.x.urn": {urnEnum}, "qb.c.x.op": {"notin"}, "qb.c.x.v": {"a", "b"},
			"qb.c.y.urn": {urnICD}, "qb.c.y.op": {"notin"}, "qb.c.y.v": {"C50, C51"}, "qb.c.z.urn": {urnAge}, "qb.c.z.op": {"none"}},
		{"qb.group": {"a"}, "qb.cond": {"a.x"}, "qb.c.x.urn": {urnDate}, "qb.c.x.op": {"any"}},
	} {
		b, err := Parse(form)
		if err != nil {
			t.Fatalf("%v: %v", form, err)
		}
		settle(b)
		doc := b.Query()
		s, err := ShapeOf(doc)
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		again := &Builder{Op: s.Op}
		for i, nodes := range s.Groups {
			g := &Group{ID: "g", Op: s.GroupOps[i]}
			for _, n := range nodes {
				c, ok := CondOf(n, els[KeyOf(n)])
				if !ok {
					t.Fatalf("%s: condition %v not read back", doc, n)
				}
				g.Conds = append(g.Conds, c)
			}
			again.Groups = append(again.Groups, g)
		}
		if got := again.Query(); got != doc {
			t.Fatalf("read back\n%s\nwrote\n%s", got, doc)
		}
	}
	// Deeper nesting and operators the builder has no field for are kept.
	for _, doc := range []string{
		`<Query><Where><And><Or><And><IsNull><MdrKey>urn:mdr16:dataelement:14:1</MdrKey></IsNull></And></Or></And></Where></Query>`,
	} {
		if _, err := ShapeOf(doc); err == nil {
			t.Fatalf("%s: read as the builder's shape", doc)
		}
	}
	gt := &samplyquery.Node{Op: "Gt", MdrKey: urnAge, Values: []string{"3"}}
	if _, ok := CondOf(gt, els[urnAge]); ok {
		t.Fatal("Gt read as a range")
	}
	// An empty builder keeps a query it could not show.
	b := &Builder{Op: "And", Kept: "<Query><Where/></Query>"}
	if b.Query() != b.Kept {
		t.Fatal("the kept query was not sent")
	}
}

func TestParseBuilderRefuses(t *testing.T) {
	for name, form := range map[string]url.Values{
		"bad op":           {"qb.op": {"Xor"}},
		"bad group op":     {"qb.group": {"a"}, "qb.g.a.op": {"Not"}},
		"bad id":           {"qb.group": {"A-1"}},
		"duplicate group":  {"qb.group": {"a", "a"}},
		"unknown group":    {"qb.group": {"a"}, "qb.cond": {"b.x"}, "qb.c.x.urn": {urnAge}},
		"duplicate cond":   {"qb.group": {"a"}, "qb.cond": {"a.x", "a.x"}, "qb.c.x.urn": {urnAge}},
		"no urn":           {"qb.group": {"a"}, "qb.cond": {"a.x"}},
		"bad urn":          {"qb.group": {"a"}, "qb.cond": {"a.x"}, "qb.c.x.urn": {"not a urn"}},
		"bad text op":      {"qb.group": {"a"}, "qb.cond": {"a.x"}, "qb.c.x.urn": {urnICD}, "qb.c.x.op": {"drop"}},
		"no such op":       {"qb.group": {"a"}, "qb.cond": {"a.x"}, "qb.c.x.urn": {urnICD}, "qb.c.x.op": {"not"}},
		"too many groups":  {"qb.group": strings.Split(strings.Repeat("a,", maxGroups)+"z", ",")},
		"too long a value": {"qb.group": {"a"}, "qb.cond": {"a.x"}, "qb.c.x.urn": {urnAge}, "qb.c.x.from": {strings.Repeat("1", maxValueLen+1)}},
	} {
		if name == "too many groups" {
			var ids []string
			for i := range maxGroups + 1 {
				ids = append(ids, fmt.Sprint("g", i))
			}
			form = url.Values{"qb.group": ids}
		}
		if _, err := Parse(form); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzParseBuilder: any form either is refused or gives a builder whose
// query the broker's parser accepts.
func FuzzParseBuilder(f *testing.F) {
	f.Add(builderFields().Encode())
	f.Add("qb.group=a&qb.cond=a.x&qb.c.x.urn=urn:a:dataelement:1:1&qb.c.x.op=in&qb.c.x.v=%3C%26%3E,x")
	f.Add("qb.group=a&qb.cond=a.x&qb.c.x.urn=urn:a:dataelement:1:1&qb.c.x.from=1&qb.c.x.to=2")
	f.Add("qb.group=a&qb.cond=a.x&qb.cond=a.y&qb.c.x.urn=urn:a:dataelement:1:1&qb.c.x.op=notin&qb.c.x.v=a&qb.c.x.v=%3Cb%3E&qb.c.y.urn=urn:a:dataelement:2:1&qb.c.y.op=none")
	f.Add("qb.group=a&qb.group=b&qb.cond=b.x&qb.c.x.urn=urn:a:dataelement:1:1&qb.c.x.op=notin&qb.c.x.v=a;b,c&qb.g.b.op=Or")
	kinds := []string{KindEnum, KindNumber, KindDate, KindText}
	f.Fuzz(func(t *testing.T, raw string) {
		form, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		b, err := Parse(form)
		if err != nil {
			return
		}
		b.Kept = ""
		for i, g := range b.Groups {
			for _, c := range g.Conds {
				c.El = &Element{URN: c.URN, Kind: kinds[i%len(kinds)], InputType: "date", DateFmt: "02.01.2006"}
			}
		}
		doc := b.Query()
		if _, err := samplyquery.Parse([]byte(doc)); err != nil {
			t.Fatalf("the builder wrote a query the broker refuses: %v\n%s", err, doc)
		}
		// Its words say it, whatever it holds.
		if s := b.Words("de"); s.Unreadable || WordsOf(doc, nil, "en").Unreadable {
			t.Fatalf("the builder's query has no words:\n%s", doc)
		}
	})
}
