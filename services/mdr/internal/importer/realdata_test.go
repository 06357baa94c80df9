package importer

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	mdrv1 "fris.dev/proto/mdr/v1"
)

// exportDir holds two real Samply MDR exports, shipped as test data.
const exportDir = "../../testdata/samply-mdr-export"

func parseExport(t testing.TB, name string) *mdrv1.Registry {
	t.Helper()
	f, err := os.Open(filepath.Join(exportDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reg, err := ParseSamplyXML(f)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// kindCounts counts a namespace's elements by URN kind.
func kindCounts(ns *mdrv1.NamespaceDef) map[string]int {
	counts := map[string]int{}
	for _, el := range ns.GetElements() {
		counts[kindOf(el.GetUrn())]++
	}
	return counts
}

func mustElement(t testing.TB, reg *mdrv1.Registry, urn string) *mdrv1.Element {
	t.Helper()
	el := elementByURN(reg, urn)
	if el == nil {
		t.Fatalf("no element %s", urn)
	}
	return el
}

func urns(prefix string, ids ...string) []string {
	var out []string
	for _, id := range ids {
		out = append(out, prefix+id)
	}
	return out
}

// checkGBAFacts asserts what is known about the GBA export (mdr16-gba.xml),
// whether it came from the XML or from the demo JSON.
func checkGBAFacts(t *testing.T, reg *mdrv1.Registry) {
	t.Helper()
	if n := len(reg.GetNamespaces()); n != 1 {
		t.Fatalf("%d namespaces, want 1", n)
	}
	ns := reg.GetNamespaces()[0]
	if ns.GetName() != "mdr16" || ns.GetPrivate() || ns.GetWriteable() {
		t.Errorf("namespace %q private=%v writeable=%v, want mdr16, public, read-only", ns.GetName(), ns.GetPrivate(), ns.GetWriteable())
	}
	assertEqual(t, &mdrv1.Labels{Designations: ns.GetDesignations()}, &mdrv1.Labels{Designations: designationsOf(
		d("de", "GBA Suchdatensatz Basis - Version 1.1", "GBA Suchdatensatz Basis. Er kann/wird noch aktualisiert"))})
	if got, want := kindCounts(ns), map[string]int{"dataelement": 34, "dataelementgroup": 6}; !mapsEqual(got, want) {
		t.Errorf("element kinds %v, want %v", got, want)
	}
	if want := urns("urn:mdr16:dataelementgroup:", "1:1", "2:1", "3:1", "4:1", "5:1", "6:1"); !slices.Equal(ns.GetMembers(), want) {
		t.Errorf("root members %q, want %q", ns.GetMembers(), want)
	}
	assertMembersResolve(t, reg)

	donor := mustElement(t, reg, "urn:mdr16:dataelementgroup:5:1")
	if want := urns("urn:mdr16:dataelement:", "21:1", "22:1", "23:1", "24:1"); !slices.Equal(donor.GetMembers(), want) {
		t.Errorf("group 5 members %q, want %q", donor.GetMembers(), want)
	}
	if donor.GetValidation() != nil {
		t.Errorf("group 5 has a validation")
	}

	sex := mustElement(t, reg, "urn:mdr16:dataelement:23:1")
	assertEqual(t, &mdrv1.Labels{Designations: sex.GetDesignations()}, &mdrv1.Labels{Designations: designationsOf(
		d("de", "Geschlecht biologisch", "Biologisches Geschlecht Probenspender"),
		d("en", "Sex", "Biological sex of sample donor"),
	)})
	v := sex.GetValidation()
	if v.GetValueDomainType() != "ENUMERATED" || v.GetDatatype() != "enumerated" || v.GetFormat() != "enumerated" || v.GetValidationType() != "NONE" {
		t.Errorf("element 23 validation %v", v)
	}
	var values []string
	for _, pv := range v.GetPermissibleValues() {
		values = append(values, pv.GetValue())
		if len(pv.GetMeanings()) != 2 {
			t.Errorf("value %q has %d meanings, want de and en", pv.GetValue(), len(pv.GetMeanings()))
		}
	}
	if want := []string{"female", "male", "sex_other/intersexual", "sex_uncharted"}; !slices.Equal(values, want) {
		t.Errorf("element 23 values %q, want %q", values, want)
	}
	if len(v.GetMeanings()) != 8 || v.GetMeanings()[2].GetDesignation() != "Männlich" {
		t.Errorf("element 23 meanings %v, want 8 starting Weiblich, Female, Männlich", v.GetMeanings())
	}
	slots := sex.GetSlots()
	if len(slots) != 5 || slots[0].GetSlotName() != "Quellsystem_Dokumentationsanteil" || sex.GetStatus() != "RELEASED" {
		t.Errorf("element 23 slots %v status %q", slots, sex.GetStatus())
	}

	age := mustElement(t, reg, "urn:mdr16:dataelement:14:1").GetValidation()
	assertEqual(t, age, &mdrv1.Validation{
		ValueDomainType:          "DESCRIBED",
		Description:              "0<=x<=120",
		Datatype:                 "INTEGER",
		Format:                   "0<=x<=120",
		MaximumCharacterQuantity: "0",
		ValidationType:           "INTEGERRANGE",
		ValidationData:           "0<=x<=120",
	})

	when := mustElement(t, reg, "urn:mdr16:dataelement:13:1").GetValidation()
	assertEqual(t, when, &mdrv1.Validation{
		ValueDomainType:          "DESCRIBED",
		Description:              "DD.MM.YYYY hh:mm:ss",
		Datatype:                 "DATETIME",
		Format:                   "DD.MM.YYYY hh:mm:ss",
		MaximumCharacterQuantity: "19",
		ValidationType:           "DATETIME",
		ValidationData:           "DIN_5008_WITH_DAYS; HOURS_24_WITH_SECONDS",
	})

	height := mustElement(t, reg, "urn:mdr16:dataelement:30:1")
	if got := height.GetDesignations()[0].GetDesignation(); got != "Körpergröße" {
		t.Errorf("element 30 is %q, want Körpergröße", got)
	}
	if got := height.GetValidation().GetUnitOfMeasure(); got != "cm" {
		t.Errorf("element 30 unit %q, want cm", got)
	}

	// An oddity of the export: cause of death is enumerated without values.
	if v := mustElement(t, reg, "urn:mdr16:dataelement:34:1").GetValidation(); v.GetValueDomainType() != "ENUMERATED" || len(v.GetPermissibleValues()) != 0 {
		t.Errorf("element 34 validation %v, want enumerated with no values", v)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestSharedGBAExport(t *testing.T) {
	checkGBAFacts(t, parseExport(t, "mdr16-gba.xml"))
}

func TestSharedGBAExportJSONRoundTrip(t *testing.T) {
	reg := parseExport(t, "mdr16-gba.xml")
	data, err := protojson.Marshal(reg)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, back, reg)
}

func TestSharedFullExport(t *testing.T) {
	reg := parseExport(t, "mdr-full.xml")

	// 16 concatenated exports: 15 of namespace mdr16 (under seven different
	// uuids) and one of mdr, its EJP-RD clone.
	var names []string
	for _, ns := range reg.GetNamespaces() {
		names = append(names, ns.GetName())
	}
	if want := []string{"mdr16", "mdr"}; !slices.Equal(names, want) {
		t.Fatalf("namespaces %q, want %q", names, want)
	}
	mdr16, mdr := reg.GetNamespaces()[0], reg.GetNamespaces()[1]
	if got, want := kindCounts(mdr16), map[string]int{"dataelement": 48, "dataelementgroup": 13}; !mapsEqual(got, want) {
		t.Errorf("mdr16 kinds %v, want %v", got, want)
	}
	if got, want := kindCounts(mdr), map[string]int{"dataelement": 42, "dataelementgroup": 8}; !mapsEqual(got, want) {
		t.Errorf("mdr kinds %v, want %v", got, want)
	}
	wantRoots16 := urns("urn:mdr16:dataelementgroup:", "1:1", "2:1", "3:1", "4:1", "5:1", "6:1", "7:1", "6:2", "7:4", "7:3", "8:1", "7:14")
	if !slices.Equal(mdr16.GetMembers(), wantRoots16) {
		t.Errorf("mdr16 roots %q, want %q", mdr16.GetMembers(), wantRoots16)
	}
	wantRoots := urns("urn:mdr:dataelementgroup:", "7:12", "6:2", "1:1", "2:1", "3:1", "4:1", "5:1")
	if !slices.Equal(mdr.GetMembers(), wantRoots) {
		t.Errorf("mdr roots %q, want %q", mdr.GetMembers(), wantRoots)
	}
	if got := mdr.GetDesignations()[0].GetDesignation(); got != "mdr16_ejprd" {
		t.Errorf("mdr designation %q, want mdr16_ejprd", got)
	}
	assertMembersResolve(t, reg)

	// The exports renumber elements: urn:mdr16:dataelement:15:1 is "Donor
	// age" in most of them but "Materialart Gewebe" in the GBA export. The
	// last document is the GBA export again, so everything it defines ends
	// up exactly as in mdr16-gba.xml.
	gba := parseExport(t, "mdr16-gba.xml")
	assertEqual(t, &mdrv1.Labels{Designations: mdr16.GetDesignations()}, &mdrv1.Labels{Designations: gba.GetNamespaces()[0].GetDesignations()})
	for _, el := range gba.GetNamespaces()[0].GetElements() {
		assertEqual(t, mustElement(t, reg, el.GetUrn()), el)
	}
	// Elements only the other exports have come from the last one defining
	// them; document 11 even defines dataelement 36 twice (OUTDATED, then
	// RELEASED), but document 15 redefines it.
	if got := mustElement(t, reg, "urn:mdr16:dataelement:36:1").GetDesignations()[0].GetDesignation(); got != "Genotyp" {
		t.Errorf("urn:mdr16:dataelement:36:1 is %q, want Genotyp (from document 15)", got)
	}
	for _, ns := range reg.GetNamespaces() {
		for _, el := range ns.GetElements() {
			if el.GetStatus() != "RELEASED" {
				t.Errorf("%s has status %q; the only OUTDATED one is superseded", el.GetUrn(), el.GetStatus())
			}
		}
	}

	again := parseExport(t, "mdr-full.xml")
	if !proto.Equal(reg, again) {
		t.Errorf("two parses of mdr-full.xml differ")
	}
}
