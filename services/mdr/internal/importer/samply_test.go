package importer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mdrv1 "fris.dev/proto/mdr/v1"
)

func TestParseSamplyXMLSmall(t *testing.T) {
	got, err := ParseSamplyXML(openFixture(t, "small.xml"))
	if err != nil {
		t.Fatal(err)
	}
	want := &mdrv1.Registry{Namespaces: []*mdrv1.NamespaceDef{{
		Name: "demo",
		Designations: designationsOf(
			d("en", "Demo", "A tiny registry"),
			d("de", "Demo", "Ein winziges Register"),
		),
		Members: []string{"urn:demo:dataelement:3:1", "urn:demo:dataelementgroup:1:1", "urn:demo:record:1:1"},
		Elements: []*mdrv1.Element{
			{
				Urn: "urn:demo:dataelement:1:2",
				Designations: designationsOf(
					d("de", "Geschlecht", "Biologisches Geschlecht"),
					d("en", "Sex", "Biological sex"),
				),
				Validation: &mdrv1.Validation{
					ValueDomainType:          "ENUMERATED",
					Datatype:                 "enumerated",
					Format:                   "enumerated",
					MaximumCharacterQuantity: "0",
					ValidationType:           "NONE",
					// File order of the values, not of their definitions.
					PermissibleValues: []*mdrv1.PermissibleValue{
						{Value: "female", Meanings: designationsOf(d("de", "Weiblich", "weiblich"), d("en", "Female", "female"))},
						{Value: "male", Meanings: designationsOf(d("de", "Männlich", "männlich"))},
					},
					Meanings: designationsOf(
						d("de", "Weiblich", "weiblich"),
						d("en", "Female", "female"),
						d("de", "Männlich", "männlich"),
					),
				},
				Slots: []*mdrv1.Slot{
					{SlotName: "source", SlotValue: "survey"},
					{SlotName: "comment"},
				},
				Status: "RELEASED",
			},
			{
				// Identifier and version are trimmed and written canonically.
				Urn:          "urn:demo:dataelement:2:1",
				Designations: designationsOf(d("de", "Alter", "Vollendete Lebensjahre bei Entnahme")),
				Validation: &mdrv1.Validation{
					ValueDomainType:          "DESCRIBED",
					Description:              "Alter in Jahren",
					Datatype:                 "INTEGER",
					Format:                   "0<=x<=120",
					MaximumCharacterQuantity: "3",
					UnitOfMeasure:            "years",
					ValidationType:           "INTEGERRANGE",
					ValidationData:           "0<=x<=120",
				},
				Status: "DRAFT",
			},
			{
				Urn:          "urn:demo:dataelement:3:1",
				Designations: designationsOf(d("en", "Note", "")),
				Validation: &mdrv1.Validation{
					ValueDomainType:          "DESCRIBED",
					Datatype:                 "STRING",
					MaximumCharacterQuantity: "0",
					ValidationType:           "NONE",
				},
				Status: "RELEASED",
			},
			{
				Urn:          "urn:demo:dataelementgroup:1:1",
				Designations: designationsOf(d("en", "Person", "Who the data is about")),
				Members:      []string{"urn:demo:dataelement:2:1", "urn:demo:dataelement:1:2"},
				Status:       "RELEASED",
			},
			{
				Urn:          "urn:demo:record:1:1",
				Designations: designationsOf(d("en", "Visit", "One visit")),
				Members:      []string{"urn:demo:dataelement:2:1"},
				Status:       "RELEASED",
			},
		},
	}}}
	assertEqual(t, got, want)
}

func TestParseSamplyXMLConcatenated(t *testing.T) {
	got, err := ParseSamplyXML(openFixture(t, "concat.xml"))
	if err != nil {
		t.Fatal(err)
	}
	described := func() *mdrv1.Validation {
		return &mdrv1.Validation{ValueDomainType: "DESCRIBED", Datatype: "STRING", MaximumCharacterQuantity: "0", ValidationType: "NONE"}
	}
	el := func(urn, label string, members ...string) *mdrv1.Element {
		e := &mdrv1.Element{Urn: urn, Designations: designationsOf(d("en", label, label)), Members: members, Status: "RELEASED"}
		if kindOf(urn) == "dataelement" {
			e.Validation = described()
		}
		return e
	}
	want := &mdrv1.Registry{Namespaces: []*mdrv1.NamespaceDef{
		{
			// Two exports of "demo" with different uuids: one namespace, the
			// later export's designations.
			Name:         "demo",
			Designations: designationsOf(d("en", "New demo", "New demo")),
			Members:      []string{"urn:demo:dataelementgroup:1:1", "urn:demo:dataelementgroup:2:1"},
			Elements: []*mdrv1.Element{
				// Redefined by the second export, kept in its first place.
				el("urn:demo:dataelement:1:1", "New one"),
				el("urn:demo:dataelement:2:1", "Two"),
				el("urn:demo:dataelement:4:1", "Four"),
				el("urn:demo:dataelementgroup:1:1", "Group one", "urn:demo:dataelement:1:1", "urn:demo:dataelement:2:1"),
				el("urn:demo:dataelement:3:1", "Two, renumbered"),
				// s2 resolves within its own export (3:1), s4 only exists in the
				// first one (4:1).
				el("urn:demo:dataelementgroup:2:1", "Group two", "urn:demo:dataelement:3:1", "urn:demo:dataelement:4:1"),
			},
		},
		{
			Name:         "other",
			Designations: designationsOf(d("en", "Other", "Other")),
			Members:      []string{"urn:other:dataelement:1:1"},
			Elements:     []*mdrv1.Element{el("urn:other:dataelement:1:1", "Elsewhere")},
		},
	}}
	assertEqual(t, got, want)
}

func TestParseSamplyXMLBroken(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"truncated.xml", "document 1, line 9: <describedValueDomain>: XML syntax error on line 11: unexpected EOF"},
		{"mismatched-tag.xml", "element <name> closed by </nam>"},
		{"second-document-truncated.xml", "document 2: "},
		{"dangling-sub.xml", `scopedIdentifier "si": sub "missing-si" not found in the input`},
		{"dangling-element.xml", `scopedIdentifier "si": element "missing-el" not found`},
		{"dangling-value-domain.xml", `data element "el": value domain "vd" not found`},
		{"dangling-namespace.xml", `scopedIdentifier "si": namespace "missing-ns" not found`},
		{"dangling-permissible-value.xml", `permissibleValue "pv": value domain "missing-vd" not found`},
		{"value-for-described-domain.xml", `permissibleValue "pv": value domain "vd" is a describedValueDomain`},
		{"missing-identifier.xml", `scopedIdentifier "si": missing <identifier>`},
		{"missing-version.xml", `scopedIdentifier "si": missing <version>`},
		{"non-numeric-identifier.xml", `<identifier> "one" is not a non-negative integer`},
		{"non-numeric-version.xml", `<version> "1.0" is not a non-negative integer`},
		{"negative-identifier.xml", `<identifier> "-1" is not a non-negative integer`},
		{"bad-max-characters.xml", `value domain "vd": <maxCharacters> "many" is not a non-negative integer`},
		{"unknown-definition.xml", `definition for "stranger" names neither element "el" nor one of its permissible values`},
		{"duplicate-uuid.xml", `<dataElement> uuid "vd" is already used by a <describedValueDomain>`},
		{"missing-uuid.xml", "<dataElement> without a uuid"},
		{"self-member.xml", "urn:demo:dataelementgroup:1:1 lists itself as a member"},
		{"data-element-with-sub.xml", "urn:demo:dataelement:2:1 is a data element but has <sub> members"},
		{"bad-namespace-name.xml", `namespace "ns": name "de:mo" cannot be part of a URN`},
		{"missing-namespace-name.xml", `namespace "ns": missing <name>`},
		{"wrong-root.xml", "document 1: root element is <registry> in namespace"},
		{"no-xml-namespace.xml", "root element is <export> without a namespace, want <export> in namespace http://schema.samply.de/mdr/common"},
		{"no-document.xml", "no <export> document found"},
		{"text-outside-export.xml", "document 2: text outside of <export>"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.file] = true
		t.Run(tt.file, func(t *testing.T) {
			reg, err := ParseSamplyXML(openFixture(t, filepath.Join("broken", tt.file)))
			if reg != nil {
				t.Errorf("got a registry along with the error")
			}
			assertErrorMentions(t, err, tt.want)
			if err != nil && !strings.HasPrefix(err.Error(), "importer: samply XML: ") {
				t.Errorf("error %q lacks the importer prefix", err)
			}
		})
	}
	// Every broken XML fixture must be in the table.
	files, _ := filepath.Glob(filepath.Join("testdata", "broken", "*.xml"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("fixture %s is not tested", f)
		}
	}
}

func TestParseSamplyXMLLocations(t *testing.T) {
	// Errors found after reading point at the scoped identifier's line.
	_, err := ParseSamplyXML(openFixture(t, filepath.Join("broken", "dangling-sub.xml")))
	assertErrorMentions(t, err, "document 1, line 10: ")
}

func TestParseSamplyXMLOddInputs(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"empty", "", "no <export> document found"},
		{"only whitespace", " \n\t", "no <export> document found"},
		{"not XML", "{}", "text outside of <export>"},
		{"latin-1", `<?xml version="1.0" encoding="ISO-8859-1"?><export xmlns="http://schema.samply.de/mdr/common"/>`, "ISO-8859-1"},
		{"invalid UTF-8", "<export xmlns=\"http://schema.samply.de/mdr/common\"><namespace uuid=\"\xff\"/></export>", "invalid UTF-8"},
		{"deep nesting", "<export xmlns=\"http://schema.samply.de/mdr/common\">" + strings.Repeat("<a>", 20000), "unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSamplyXML(strings.NewReader(tt.input))
			assertErrorMentions(t, err, tt.want)
		})
	}
}

func TestParseSamplyXMLEmptyExport(t *testing.T) {
	// An export with only a namespace is valid: a namespace without elements.
	reg, err := ParseSamplyXML(strings.NewReader(`<export xmlns="http://schema.samply.de/mdr/common">
		<namespace uuid="n"><name>empty</name></namespace></export>`))
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, reg, &mdrv1.Registry{Namespaces: []*mdrv1.NamespaceDef{{Name: "empty"}}})
}

func TestParseSamplyXMLDeterministic(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "concat.xml"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := ParseSamplyXML(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		again, err := ParseSamplyXML(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		assertEqual(t, again, first)
	}
}

func TestParseSamplyXMLSizeLimit(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "small.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseSamplyXML(bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatalf("input of exactly the limit: %v", err)
	}
	_, err = parseSamplyXML(bytes.NewReader(data), int64(len(data))-1)
	assertErrorMentions(t, err, "larger than the limit")
	// Cut off inside a document, which alone would be a syntax error.
	_, err = parseSamplyXML(bytes.NewReader(data), 100)
	assertErrorMentions(t, err, "larger than the limit of 100 bytes")
}

func TestParseSamplyXMLExpansionLimit(t *testing.T) {
	// Many data elements sharing one huge enumerated domain: small input,
	// but each element would carry a copy of every value.
	var b strings.Builder
	b.WriteString(`<export xmlns="http://schema.samply.de/mdr/common"><namespace uuid="n"><name>big</name></namespace>`)
	b.WriteString(`<enumeratedValueDomain uuid="vd"/>`)
	const values, elements = 2048, 513 // one element more than the limit allows
	for i := range values {
		fmt.Fprintf(&b, `<permissibleValue valueDomain="vd" uuid="pv%d"><value>%d</value></permissibleValue>`, i, i)
	}
	for i := range elements {
		fmt.Fprintf(&b, `<dataElement uuid="e%d"><valueDomain>vd</valueDomain></dataElement>`, i)
		fmt.Fprintf(&b, `<scopedIdentifier uuid="s%d"><namespace>n</namespace><identifier>%d</identifier><version>1</version><element>e%d</element></scopedIdentifier>`, i, i+1, i)
	}
	b.WriteString(`</export>`)
	_, err := ParseSamplyXML(strings.NewReader(b.String()))
	assertErrorMentions(t, err, `scopedIdentifier "s512": the export expands to more than 1048576 permissible values`)
}

func TestParseSamplyXMLCatalogDomain(t *testing.T) {
	// Neither real export has a catalog domain; Samply's schema does.
	reg, err := ParseSamplyXML(strings.NewReader(`<export xmlns="http://schema.samply.de/mdr/common">
		<namespace uuid="n"><name>cat</name></namespace>
		<catalog uuid="c"><code uuid="c1"/></catalog>
		<catalogValueDomain uuid="vd"><format>ICD-10</format><datatype>CATALOG</datatype><maxCharacters>7</maxCharacters><catalog>c</catalog></catalogValueDomain>
		<dataElement uuid="e"><valueDomain>vd</valueDomain></dataElement>
		<scopedIdentifier uuid="s"><namespace>n</namespace><identifier>1</identifier><version>1</version><element>e</element><status>RELEASED</status></scopedIdentifier>
	</export>`))
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, reg.GetNamespaces()[0].GetElements()[0].GetValidation(), &mdrv1.Validation{
		ValueDomainType:          "CATALOG",
		Datatype:                 "CATALOG",
		Format:                   "ICD-10",
		MaximumCharacterQuantity: "7",
		ValidationType:           "NONE",
	})
}
