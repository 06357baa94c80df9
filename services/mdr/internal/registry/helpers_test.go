package registry

import (
	"errors"
	"slices"
	"strings"
	"testing"

	mdrv1 "fris.dev/proto/mdr/v1"
)

// seeing is a Viewer granted the listed private namespaces.
type seeing map[string]bool

func (s seeing) CanSee(ns string) bool { return s[ns] }

func des(lang, designation, definition string) *mdrv1.Designation {
	return &mdrv1.Designation{Lang: lang, Designation: designation, Definition: definition}
}

func elem(urn string, ds ...*mdrv1.Designation) *mdrv1.Element {
	return &mdrv1.Element{Urn: urn, Designations: ds}
}

func withValidation(el *mdrv1.Element, v *mdrv1.Validation) *mdrv1.Element {
	el.Validation = v
	return el
}

func withMembers(el *mdrv1.Element, members ...string) *mdrv1.Element {
	el.Members = members
	return el
}

func rangeOf(vt, data string) *mdrv1.Validation {
	return &mdrv1.Validation{ValueDomainType: "DESCRIBED", Datatype: "INTEGER", ValidationType: vt, ValidationData: data}
}

func nsDef(name string, roots []string, els ...*mdrv1.Element) *mdrv1.NamespaceDef {
	return &mdrv1.NamespaceDef{Name: name, Members: roots, Elements: els}
}

func privateNS(d *mdrv1.NamespaceDef) *mdrv1.NamespaceDef {
	d.Private = true
	return d
}

func mustBuild(t testing.TB, defs ...*mdrv1.NamespaceDef) *Index {
	t.Helper()
	ix, err := Build(1, defs)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return ix
}

// URNs of the fixture.
const (
	age1       = "urn:pub:dataelement:1:1"
	age9       = "urn:pub:dataelement:1:9"
	age10      = "urn:pub:dataelement:1:10"
	ageLatest  = "urn:pub:dataelement:1:latest"
	height     = "urn:pub:dataelement:2:1"
	physician  = "urn:pub:dataelement:3:1"
	sex        = "urn:pub:dataelement:4:1"
	birthday   = "urn:pub:dataelement:5:1"
	plain      = "urn:pub:dataelement:6:1"
	measures1  = "urn:pub:dataelementgroup:1:1"
	measures2  = "urn:pub:dataelementgroup:1:2"
	patient    = "urn:pub:dataelementgroup:2:1"
	visit      = "urn:pub:record:1:1"
	secret     = "urn:geheim:dataelement:1:1"
	secretGrp  = "urn:geheim:dataelementgroup:1:1"
	publicRoot = 5 // root members of pub
)

// fixture is a small registry: a public namespace "pub" with several
// versions of one data element (stored 1, 10, 9 so that neither stored order
// nor string order gives the newest), groups, a record and assorted
// validations; a private namespace "geheim"; an empty public "alpha". It is
// built afresh for every call, so tests may change it before building.
func fixture() []*mdrv1.NamespaceDef {
	pub := nsDef("pub",
		[]string{patient, sex, visit, age10, measures2},
		withValidation(elem(age1, des("de", "Uraltes Alter", "erste Fassung"), des("en", "Ancient age", "")), rangeOf("INTEGERRANGE", "0<=x<=150")),
		withValidation(elem(age10, des("de", "Alter", "Alter in Jahren"), des("en", "Age", "Age in years"), des("fr", "Âge", "")), rangeOf("INTEGERRANGE", "0<=x<=120")),
		withValidation(elem(age9, des("de", "Altes Alter", "neunte Fassung")), rangeOf("INTEGERRANGE", "0<=x<=130")),
		withValidation(elem(height, des("de", "Größe", "Körpergröße in cm"), des("en", "Height", "Body height in cm")), rangeOf("FLOATRANGE", "0<=x<=300")),
		withValidation(elem(physician, des("de", "Ärztin", "Behandelnde Ärztin"), des("en", "Physician", "")),
			&mdrv1.Validation{ValueDomainType: "DESCRIBED", Datatype: "STRING", MaximumCharacterQuantity: "5"}),
		withValidation(elem(sex, des("de", "Geschlecht", ""), des("en", "Sex", "")),
			&mdrv1.Validation{ValueDomainType: "ENUMERATED", Datatype: "STRING", PermissibleValues: []*mdrv1.PermissibleValue{
				{Value: "m", Meanings: []*mdrv1.Designation{des("de", "männlich", ""), des("en", "male", "")}},
				{Value: "f", Meanings: []*mdrv1.Designation{des("de", "weiblich", ""), des("en", "female", "")}},
			}}),
		withValidation(elem(birthday, des("de", "Geburtsdatum", "")), &mdrv1.Validation{ValueDomainType: "DESCRIBED", Datatype: "DATE", ValidationType: "DATE", ValidationData: "DIN_5008_WITH_DAYS"}),
		elem(plain, &mdrv1.Designation{Language: "de", Designation: "Bemerkung"}), // no validation; language, not lang
		withMembers(elem(measures1, des("de", "Messwerte alt", ""), des("en", "Old measurements", "")), height, ageLatest, physician),
		withMembers(elem(measures2, des("de", "Messwerte", ""), des("en", "Measurements", "")), height, age10),
		withMembers(elem(patient, des("de", "Patient", ""), des("en", "Patient", "")), measures1, sex, birthday, plain),
		withMembers(elem(visit, des("de", "Besuch", ""), des("en", "Visit", "")), birthday, age10, sex),
	)
	pub.Writeable = true
	pub.Designations = []*mdrv1.Designation{des("de", "Öffentlich", ""), des("en", "Public", "")}
	geheim := privateNS(nsDef("geheim", []string{secret, secretGrp},
		withValidation(elem(secret, des("de", "Geheimnis", "streng geheime Größe")), rangeOf("INTEGER", "")),
		withMembers(elem(secretGrp, des("de", "Geheime Gruppe", "")), secret),
	))
	alpha := nsDef("alpha", nil)
	return []*mdrv1.NamespaceDef{pub, geheim, alpha}
}

func ids(ml *mdrv1.MemberList) []string {
	out := []string{}
	for _, m := range ml.GetResults() {
		out = append(out, m.GetId())
	}
	return out
}

func recordIDs(rms []*mdrv1.RecordMember) []string {
	out := []string{}
	for _, m := range rms {
		out = append(out, m.GetId())
	}
	return out
}

func langsOf(ds []*mdrv1.Designation) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.GetLang())
	}
	return out
}

func namesOf(nss []*mdrv1.Namespace) []string {
	out := []string{}
	for _, n := range nss {
		out = append(out, n.GetName())
	}
	return out
}

func assertStrings(t testing.TB, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

// assertErr checks err wraps the sentinel and, if given, mentions want.
func assertErr(t testing.TB, err, sentinel error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", sentinel)
	}
	if !errors.Is(err, sentinel) {
		t.Errorf("error %q is not %v", err, sentinel)
	}
	if want != "" && !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not mention %q", err, want)
	}
}
