package querybuild

import (
	"net/url"
	"testing"

	"fris.dev/gateway/internal/i18n"
	"fris.dev/pkg/samplyquery"
	mdrv1 "fris.dev/proto/mdr/v1"
)

// wordsElements are the tests' data elements with a unit, a designation
// of HTML-special characters and a pick list of two values.
func wordsElements(l i18n.Lang) Elements {
	els := Elements{}
	for urn, de := range elements {
		els[urn] = ElementOf(urn, de, l)
	}
	els[urnAge].Unit = "a"
	sex := "urn:mdr16:dataelement:1:1"
	els[sex] = ElementOf(sex, &mdrv1.DataElement{Designations: ds("Gender", "Geschlecht"),
		Validation: &mdrv1.Validation{Datatype: "enumerated", ValueDomainType: "ENUMERATED", PermissibleValues: []*mdrv1.PermissibleValue{
			{Value: "f", Meanings: ds("female", "weiblich")}, {Value: "m", Meanings: ds("male", "männlich")}, {Value: "d", Meanings: ds("diverse", "divers")}}}}, l)
	odd := "urn:mdr16:dataelement:2:1"
	els[odd] = ElementOf(odd, &mdrv1.DataElement{Designations: ds(`<b>"R&D"</b>`, `<b>"F&E"</b>`), Validation: &mdrv1.Validation{Datatype: "STRING"}}, l)
	return els
}

// cond is a comparison in the query language, for the tests.
func cond(op, urn string, vs ...string) string {
	k := "<MdrKey>" + urn + "</MdrKey>"
	var v string
	for _, x := range vs {
		v += "<Value>" + x + "</Value>"
	}
	switch op {
	case "IsNull", "IsNotNull":
		return "<" + op + ">" + k + "</" + op + ">"
	case "In":
		return "<In><MultivalueAttribute>" + k + v + "</MultivalueAttribute></In>"
	case "Between":
		return "<Between><RangeAttribute>" + k + "<LowerBound>" + vs[0] + "</LowerBound><UpperBound>" + vs[1] + "</UpperBound></RangeAttribute></Between>"
	}
	return "<" + op + "><Attribute>" + k + v + "</Attribute></" + op + ">"
}

func where(conds ...string) string {
	doc := "<Query><Where>"
	for _, c := range conds {
		doc += c
	}
	return doc + "</Where></Query>"
}

// TestWords: every operator, ranges, nested groups and an element the
// registry lacks, said in English and German.
func TestWords(t *testing.T) {
	const sex, odd, gone = "urn:mdr16:dataelement:1:1", "urn:mdr16:dataelement:2:1", "urn:mdr16:dataelement:99:1"
	for _, c := range []struct {
		name, doc, en, de string
	}{
		{"equal, a meaning", where(cond("Eq", sex, "f")), "Gender: female", "Geschlecht: weiblich"},
		{"one of", where(cond("In", sex, "f", "m", "d")), "Gender: female, male, diverse", "Geschlecht: weiblich, männlich, divers"},
		{"not", where(cond("Neq", urnICD, "C50")), "Diagnosis ICD-10 is not C50", "Diagnose ICD-10 ist nicht C50"},
		{"none of", where("<And>" + cond("Neq", sex, "f") + cond("Neq", sex, "m") + "</And>"), "Gender is none of female, male", "Geschlecht ist keiner von weiblich, männlich"},
		{"range with unit", where(cond("Between", urnAge, "18", "65")), "Donor age: 18–65 a", "Spenderalter: 18–65 a"},
		{"at least", where(cond("Geq", urnAge, "18")), "Donor age: at least 18 a", "Spenderalter: mindestens 18 a"},
		{"more than", where(cond("Gt", urnAge, "18")), "Donor age: more than 18 a", "Spenderalter: mehr als 18 a"},
		{"at most", where(cond("Leq", urnAge, "65")), "Donor age: at most 65 a", "Spenderalter: höchstens 65 a"},
		{"less than", where(cond("Lt", urnAge, "65")), "Donor age: less than 65 a", "Spenderalter: weniger als 65 a"},
		{"a date range", where(cond("Between", urnDate, "01.01.2020", "31.12.2020")), "Date of diagnosis: 01.01.2020–31.12.2020", "Diagnosedatum: 01.01.2020–31.12.2020"},
		{"contains", where(cond("Like", urnICD, "%C34%")), "Diagnosis ICD-10 contains C34", "Diagnose ICD-10 enthält C34"},
		{"a pattern", where(cond("Like", urnICD, "C3%4")), "Diagnosis ICD-10 matches the pattern C3%4", "Diagnose ICD-10 passt zum Muster C3%4"},
		{"no value", where(cond("IsNull", urnICD)), "Diagnosis ICD-10 has no value", "Diagnose ICD-10 hat keinen Wert"},
		{"any value", where(cond("IsNotNull", urnICD)), "Diagnosis ICD-10 has any value", "Diagnose ICD-10 hat einen Wert"},
		{"unknown element", where(cond("Eq", gone, "x"), cond("IsNull", gone)), gone + ": x and " + gone + " has no value", gone + ": x und " + gone + " hat keinen Wert"},
		{"special characters", where(cond("Eq", odd, "&lt;i&gt;")), `<b>"R&D"</b>: <i>`, `<b>"F&E"</b>: <i>`},
		{"no condition", where(), "", ""},
		{"one group unbracketed", where("<Or>" + cond("Eq", sex, "f") + cond("IsNull", urnAge) + "</Or>"), "Gender: female or Donor age has no value", "Geschlecht: weiblich oder Spenderalter hat keinen Wert"},
		{"nested groups", where("<And>" + cond("Eq", sex, "f") + "<Or>" + cond("Between", urnAge, "18", "65") + cond("Neq", urnICD, "C50") +
			"<And>" + cond("IsNotNull", urnICD) + cond("Leq", urnAge, "3") + "</And></Or></And>"),
			"Gender: female and (Donor age: 18–65 a or Diagnosis ICD-10 is not C50 or (Diagnosis ICD-10 has any value and Donor age: at most 3 a))",
			"Geschlecht: weiblich und (Spenderalter: 18–65 a oder Diagnose ICD-10 ist nicht C50 oder (Diagnose ICD-10 hat einen Wert und Spenderalter: höchstens 3 a))"},
		{"a group of one, an empty group", where("<Or>"+cond("Eq", sex, "m")+"</Or>", "<And/>"), "Gender: male and no condition", "Geschlecht: männlich und keine Bedingung"},
	} {
		for l, want := range map[i18n.Lang]string{i18n.English: c.en, i18n.German: c.de} {
			s := WordsOf(c.doc, wordsElements(l), l)
			if s.Unreadable || s.String() != want {
				t.Errorf("%s (%s): %q, want %q", c.name, l, s.String(), want)
			}
			if s.Empty() != (want == "") {
				t.Errorf("%s (%s): empty %v", c.name, l, s.Empty())
			}
		}
	}
	if m := wordsCatalogue.Missing(); len(m) > 0 {
		t.Errorf("texts missing: %v", m)
	}
	if s := WordsOf("<Query>", nil, i18n.English); !s.Unreadable || s.Empty() {
		t.Errorf("a broken query: %+v", s)
	}
	// A designation in another language than the page's is marked so.
	els := Elements{urnICD: {URN: urnICD}}
	els[urnICD].Label.Text, els[urnICD].Label.Lang = "Diagnose", "de"
	if s := WordsOf(where(cond("IsNull", urnICD)), els, i18n.English); s.Parts[0].Chip.Label.Lang != "de" {
		t.Errorf("label %+v", s.Parts[0].Chip.Label)
	}
}

// TestBuilderWords: the builder's chips are its conditions, each naming
// the condition it removes, bracketed as the query it writes.
func TestBuilderWords(t *testing.T) {
	for _, c := range []struct {
		form     url.Values
		en, de   string
		removals []string
	}{
		{builderFields(), "(Donor age: 18–99 and Sample type tissue: Tissue snap frozen) or (Date of diagnosis: at least 01.01.2020 and Diagnosis ICD-10: C34.0, C34.1)",
			"(Spenderalter: 18–99 und Materialart Gewebe: Gewebe schockgefroren) oder (Diagnosedatum: mindestens 01.01.2020 und Diagnose ICD-10: C34.0, C34.1)", []string{"c1", "c2", "c3", "c4"}},
		{url.Values{"qb.group": {"a", "b"}, "qb.cond": {"a.x", "a.y", "b.z"}, "qb.g.a.op": {"Or"},
			"qb.c.x.urn": {urnEnum}, "qb.c.x.op": {"notin"}, "qb.c.x.v": {"tissue_frozen"},
			"qb.c.y.urn": {urnAge}, "qb.c.y.op": {"none"}, "qb.c.y.from": {"3"},
			"qb.c.z.urn": {urnICD}, "qb.c.z.op": {"notin"}, "qb.c.z.v": {"C50, C51"}},
			"(Sample type tissue is not Tissue snap frozen or Donor age has no value) and Diagnosis ICD-10 is none of C50, C51",
			"(Materialart Gewebe ist nicht Gewebe schockgefroren oder Spenderalter hat keinen Wert) und Diagnose ICD-10 ist keiner von C50, C51", []string{"x", "y", "z"}},
		// A condition without anything to ask has no chip.
		{url.Values{"qb.group": {"a"}, "qb.cond": {"a.x", "a.y"}, "qb.c.x.urn": {urnICD}, "qb.c.x.op": {"eq"}, "qb.c.y.urn": {urnDate}, "qb.c.y.op": {"any"}},
			"Date of diagnosis has any value", "Diagnosedatum hat einen Wert", []string{"y"}},
	} {
		for l, want := range map[i18n.Lang]string{i18n.English: c.en, i18n.German: c.de} {
			b, err := Parse(c.form)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range b.Groups {
				for _, cd := range g.Conds {
					cd.El = ElementOf(cd.URN, elements[cd.URN], l)
				}
			}
			s := b.Words(l)
			if s.String() != want {
				t.Errorf("%s: %q, want %q", l, s.String(), want)
			}
			// The builder's words are those of the query it writes.
			if got := WordsOf(b.Query(), elementsOf(b), l).String(); got != want {
				t.Errorf("%s: the stored query says %q", l, got)
			}
			var removes []string
			var walk func([]Part)
			walk = func(ps []Part) {
				for _, p := range ps {
					if p.Chip != nil {
						removes = append(removes, p.Chip.Cond)
						if p.Chip.RemoveLabel == "" {
							t.Errorf("chip %q has no remove label", p.Chip.Text())
						}
					}
					walk(p.Group)
				}
			}
			walk(s.Parts)
			if len(removes) != len(c.removals) {
				t.Fatalf("chips remove %q, want %q", removes, c.removals)
			}
			for i := range removes {
				if removes[i] != c.removals[i] {
					t.Errorf("chips remove %q, want %q", removes, c.removals)
				}
			}
		}
	}
	// Removing a condition takes it out of its group.
	b, _ := Parse(builderFields())
	if !b.Remove("c2") || b.Remove("c2") || b.Conditions() != 3 || len(b.Groups[0].Conds) != 1 {
		t.Fatalf("remove: %+v", b.Groups[0].Conds)
	}
	// A builder that keeps a query it cannot show says that query.
	kept := &Builder{Op: "And", Kept: where(cond("IsNull", urnAge))}
	if got := kept.Words(i18n.English).String(); got != urnAge+" has no value" {
		t.Errorf("kept: %q", got)
	}
}

func elementsOf(b *Builder) Elements {
	els := Elements{}
	for _, g := range b.Groups {
		for _, c := range g.Conds {
			els[c.URN] = c.El
		}
	}
	return els
}

// TestNegationRoundTrip: "is not", "none of", "has no value" and "has any
// value" go through the broker's parser and back into the builder.
func TestNegationRoundTrip(t *testing.T) {
	form := url.Values{"qb.group": {"a"}, "qb.cond": {"a.w", "a.x", "a.y", "a.z", "a.v"}, "qb.g.a.op": {"Or"},
		"qb.c.w.urn": {urnEnum}, "qb.c.w.op": {"notin"}, "qb.c.w.v": {"a", "b"},
		"qb.c.x.urn": {urnICD}, "qb.c.x.op": {"neq"}, "qb.c.x.v": {"C50"},
		"qb.c.y.urn": {urnAge}, "qb.c.y.op": {"none"},
		"qb.c.z.urn": {urnDate}, "qb.c.z.op": {"any"},
		"qb.c.v.urn": {urnICD}, "qb.c.v.op": {"notin"}, "qb.c.v.v": {"C1; C2"}}
	b, err := Parse(form)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range b.Groups {
		for _, c := range g.Conds {
			c.El = ElementOf(c.URN, elements[c.URN], "en")
		}
	}
	doc := b.Query()
	q, err := samplyquery.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	or := q.Where.Children[0]
	ops := ""
	for _, n := range or.Children {
		ops += n.Op + " "
	}
	if ops != "And Neq IsNull IsNotNull And " || !NoneOf(or.Children[0]) || len(or.Children[4].Children) != 2 {
		t.Fatalf("%s\n%s", ops, doc)
	}
	// One group reads back as groups of one condition each, joined as it
	// joined them: the same query.
	s, err := ShapeOf(samplyquery.Render(q))
	if err != nil || len(s.Groups) != 5 || s.Op != "Or" {
		t.Fatalf("shape %+v %v", s, err)
	}
	want := []struct{ op, v string }{{"notin", "a"}, {"neq", "C50"}, {"none", ""}, {"any", ""}, {"notin", "C1, C2"}}
	for i, g := range s.Groups {
		n := g[0]
		e := ElementOf(KeyOf(n), elements[KeyOf(n)], "en")
		c, ok := CondOf(n, e)
		if !ok || c.Op != want[i].op || c.Value() != want[i].v || c.URN != e.URN {
			t.Errorf("condition %d: %+v %v", i, c, ok)
		}
	}
}
