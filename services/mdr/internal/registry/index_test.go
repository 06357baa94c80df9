package registry

import (
	"testing"

	"google.golang.org/protobuf/proto"

	mdrv1 "fris.dev/proto/mdr/v1"
)

func TestBuildFixture(t *testing.T) {
	defs := fixture()
	var before []*mdrv1.NamespaceDef
	for _, d := range defs {
		before = append(before, proto.Clone(d).(*mdrv1.NamespaceDef))
	}
	ix, err := Build(42, defs)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if ix.Generation != 42 {
		t.Errorf("Generation = %d, want 42", ix.Generation)
	}
	for i := range defs {
		if !proto.Equal(defs[i], before[i]) {
			t.Errorf("Build changed its input namespace %q", defs[i].GetName())
		}
	}
	want := []NamespaceInfo{
		{Name: "alpha"},
		{Name: "geheim", Private: true, Elements: 2, Members: 2},
		{Name: "pub", Elements: 12, Members: publicRoot},
	}
	got := ix.Infos()
	if len(got) != len(want) {
		t.Fatalf("Infos = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Infos[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestBuildEmpty(t *testing.T) {
	for _, defs := range [][]*mdrv1.NamespaceDef{nil, {}} {
		ix, err := Build(0, defs)
		if err != nil {
			t.Fatalf("Build(%v): %v", defs, err)
		}
		if n := ix.Namespaces(Anonymous{}, LangOrder{}); len(n) != 0 {
			t.Errorf("empty index lists %v", n)
		}
		if len(ix.Infos()) != 0 {
			t.Errorf("empty index has infos %v", ix.Infos())
		}
	}
}

// Stored URNs may be written in any accepted spelling; the index answers with
// the canonical one.
func TestBuildCanonicalizesStoredURNs(t *testing.T) {
	ix := mustBuild(t, nsDef("ns", []string{"urn%3Ans%3Adataelementgroup%3A01%3A01"},
		elem("urn%3Ans%3Adataelement%3A1%3A01", des("de", "Eins", "")),
		withMembers(elem("urn:ns:dataelementgroup:001:1", des("de", "Gruppe", "")), "urn:ns:dataelement:0001:latest"),
	))
	ml, err := ix.NamespaceMembers(Anonymous{}, "ns", Page{}, LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	assertStrings(t, "root members", ids(ml), []string{"urn:ns:dataelementgroup:1:1"})
	ml, err = ix.GroupMembers(Anonymous{}, "urn:ns:dataelementgroup:1:1", Page{}, LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	assertStrings(t, "group members", ids(ml), []string{"urn:ns:dataelement:1:1"})
	de, err := ix.DataElement(Anonymous{}, "urn:ns:dataelement:1:1", LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	if got := de.GetIdentification().GetUrn(); got != "urn:ns:dataelement:1:1" {
		t.Errorf("identification = %q", got)
	}
}

func TestBuildErrors(t *testing.T) {
	de := func(urn string) *mdrv1.Element { return elem(urn, des("de", "x", "")) }
	cases := []struct {
		name string
		defs []*mdrv1.NamespaceDef
		want string // the error must mention this
	}{
		{"empty namespace name", []*mdrv1.NamespaceDef{nsDef("", nil)}, `""`},
		{"namespace name with space", []*mdrv1.NamespaceDef{nsDef("my ns", nil)}, "my ns"},
		{"namespace name with colon", []*mdrv1.NamespaceDef{nsDef("a:b", nil)}, "a:b"},
		{"namespace twice", []*mdrv1.NamespaceDef{nsDef("ns", nil), nsDef("ns", nil)}, "twice"},
		{"malformed element URN", []*mdrv1.NamespaceDef{nsDef("ns", nil, de("urn:ns:dataelement:x:1"))}, "urn:ns:dataelement:x:1"},
		{"element URN with latest", []*mdrv1.NamespaceDef{nsDef("ns", nil, de("urn:ns:dataelement:1:latest"))}, "concrete version"},
		{"element outside its namespace", []*mdrv1.NamespaceDef{nsDef("ns", nil, de("urn:other:dataelement:1:1"))}, "urn:other:dataelement:1:1"},
		{"element in a sibling namespace", []*mdrv1.NamespaceDef{
			nsDef("a", nil), nsDef("b", nil, de("urn:a:dataelement:1:1")),
		}, "urn:a:dataelement:1:1"},
		{"duplicate URN", []*mdrv1.NamespaceDef{nsDef("ns", nil, de("urn:ns:dataelement:1:1"), de("urn:ns:dataelement:1:1"))}, "twice"},
		{"duplicate URN in another spelling", []*mdrv1.NamespaceDef{nsDef("ns", nil, de("urn:ns:dataelement:1:1"), de("urn:ns:dataelement:01:001"))}, "urn:ns:dataelement:1:1"},
		{"dangling group member", []*mdrv1.NamespaceDef{nsDef("ns", nil,
			withMembers(de("urn:ns:dataelementgroup:1:1"), "urn:ns:dataelement:99:1"))}, "urn:ns:dataelement:99:1"},
		{"dangling member version", []*mdrv1.NamespaceDef{nsDef("ns", nil, de("urn:ns:dataelement:1:1"),
			withMembers(de("urn:ns:dataelementgroup:1:1"), "urn:ns:dataelement:1:2"))}, "urn:ns:dataelement:1:2"},
		{"dangling latest member", []*mdrv1.NamespaceDef{nsDef("ns", nil,
			withMembers(de("urn:ns:record:1:1"), "urn:ns:dataelement:1:latest"))}, "urn:ns:dataelement:1:latest"},
		{"member id exists only as another kind", []*mdrv1.NamespaceDef{nsDef("ns", nil, de("urn:ns:dataelement:1:1"),
			withMembers(de("urn:ns:dataelementgroup:1:1"), "urn:ns:record:1:1"))}, "urn:ns:record:1:1"},
		{"malformed member", []*mdrv1.NamespaceDef{nsDef("ns", nil,
			withMembers(de("urn:ns:dataelementgroup:1:1"), "not a urn"))}, "not a urn"},
		{"dangling root member", []*mdrv1.NamespaceDef{nsDef("ns", []string{"urn:ns:dataelement:1:1"})}, "urn:ns:dataelement:1:1"},
		{"malformed root member", []*mdrv1.NamespaceDef{nsDef("ns", []string{"urn:ns:dataelement:1"})}, "urn:ns:dataelement:1"},
		{"root member outside its namespace", []*mdrv1.NamespaceDef{
			nsDef("a", nil, de("urn:a:dataelement:1:1")),
			nsDef("b", []string{"urn:a:dataelement:1:1"}),
		}, "urn:a:dataelement:1:1"},
		{"record with a group member", []*mdrv1.NamespaceDef{nsDef("ns", nil,
			de("urn:ns:dataelement:1:1"),
			withMembers(de("urn:ns:dataelementgroup:1:1"), "urn:ns:dataelement:1:1"),
			withMembers(de("urn:ns:record:1:1"), "urn:ns:dataelement:1:1", "urn:ns:dataelementgroup:1:1"))}, "urn:ns:dataelementgroup:1:1"},
		{"record with a record member", []*mdrv1.NamespaceDef{nsDef("ns", nil,
			de("urn:ns:dataelement:1:1"),
			withMembers(de("urn:ns:record:1:1"), "urn:ns:dataelement:1:1"),
			withMembers(de("urn:ns:record:2:1"), "urn:ns:record:1:1"))}, "urn:ns:record:1:1"},
		{"data element with members", []*mdrv1.NamespaceDef{nsDef("ns", nil,
			de("urn:ns:dataelement:1:1"),
			withMembers(de("urn:ns:dataelement:2:1"), "urn:ns:dataelement:1:1"))}, "urn:ns:dataelement:2:1"},
		{"bad range validation", []*mdrv1.NamespaceDef{nsDef("ns", nil,
			withValidation(de("urn:ns:dataelement:1:1"), rangeOf("INTEGERRANGE", "0<x<120")))}, "0<x<120"},
		{"bad date format", []*mdrv1.NamespaceDef{nsDef("ns", nil,
			withValidation(de("urn:ns:dataelement:1:1"), rangeOf("DATE", "YYYY")))}, "YYYY"},
		{"bad regex", []*mdrv1.NamespaceDef{nsDef("ns", nil,
			withValidation(de("urn:ns:dataelement:1:1"), rangeOf("REGEX", "([a-z]")))}, "urn:ns:dataelement:1:1"},
		{"unknown validation type", []*mdrv1.NamespaceDef{nsDef("ns", nil,
			withValidation(de("urn:ns:dataelement:1:1"), rangeOf("COLOR", "")))}, "COLOR"},
		{"group with a validation", []*mdrv1.NamespaceDef{nsDef("ns", nil,
			withValidation(de("urn:ns:dataelementgroup:1:1"), rangeOf("INTEGER", "")))}, "urn:ns:dataelementgroup:1:1"},
		{"record with a validation", []*mdrv1.NamespaceDef{nsDef("ns", nil,
			withValidation(de("urn:ns:record:1:1"), rangeOf("NONE", "")))}, "urn:ns:record:1:1"},
		{"error in a later namespace", append(fixture(), nsDef("zeta", []string{"urn:zeta:record:1:1"})), "urn:zeta:record:1:1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ix, err := Build(1, c.defs)
			if ix != nil {
				t.Errorf("Build returned an index along with error %v", err)
			}
			assertErr(t, err, ErrInvalid, c.want)
		})
	}
}

// Members may point to any version, including latest, which Build resolves
// once: the index is a snapshot.
func TestBuildResolvesLatestMembersToTheNewestVersion(t *testing.T) {
	ix := mustBuild(t, fixture()...)
	ml, err := ix.GroupMembers(Anonymous{}, measures1, Page{}, LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	assertStrings(t, "members of "+measures1, ids(ml), []string{height, age10, physician})
}

func TestBuildFillsLangAndLanguage(t *testing.T) {
	ix := mustBuild(t, fixture()...)
	ds, err := ix.Labels(Anonymous{}, plain, KindDataElement, LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].GetLang() != "de" || ds[0].GetLanguage() != "de" {
		t.Errorf("designations of %s = %v, want lang and language de", plain, ds)
	}
	ds, err = ix.Labels(Anonymous{}, height, KindDataElement, LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.GetLanguage() == "" || d.GetLanguage() != d.GetLang() {
			t.Errorf("designation %v: language not filled from lang", d)
		}
	}
}
