package registry

import (
	"fmt"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	mdrv1 "fris.dev/proto/mdr/v1"
)

var pubRoots = []string{patient, sex, visit, age10, measures2}

func TestNamespaceMembers(t *testing.T) {
	ix := mustBuild(t, fixture()...)
	ml, err := ix.NamespaceMembers(Anonymous{}, "pub", Page{}, LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	assertStrings(t, "root members in stored order", ids(ml), pubRoots)
	if int(ml.GetTotalcount()) != len(ml.GetResults()) {
		t.Errorf("totalcount %d, %d results", ml.GetTotalcount(), len(ml.GetResults()))
	}
	var types []string
	for _, m := range ml.GetResults() {
		types = append(types, m.GetType())
	}
	assertStrings(t, "member types", types, []string{"DATAELEMENTGROUP", "DATAELEMENT", "RECORD", "DATAELEMENT", "DATAELEMENTGROUP"})
	assertStrings(t, "designations of "+age10, langsOf(ml.GetResults()[3].GetDesignations()), []string{"de", "en", "fr"})
	if got := ml.GetResults()[3].GetDesignations()[0].GetDesignation(); got != "Alter" {
		t.Errorf("designation of %s = %q, want that of version 10", age10, got)
	}

	sorted, err := ix.NamespaceMembers(Anonymous{}, "pub", Page{}, ParseAcceptLanguage("fr, en;q=0.5"))
	if err != nil {
		t.Fatal(err)
	}
	assertStrings(t, "sorted designations of "+age10, langsOf(sorted.GetResults()[3].GetDesignations()), []string{"fr", "en", "de"})
	assertStrings(t, "sorted designations of "+sex, langsOf(sorted.GetResults()[1].GetDesignations()), []string{"en", "de"})
	again, err := ix.NamespaceMembers(Anonymous{}, "pub", Page{}, LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	assertStrings(t, "designations of "+age10+" afterwards", langsOf(again.GetResults()[3].GetDesignations()), []string{"de", "en", "fr"})

	empty, err := ix.NamespaceMembers(Anonymous{}, "alpha", Page{}, LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	if empty.GetTotalcount() != 0 || len(empty.GetResults()) != 0 {
		t.Errorf("empty namespace lists %v", empty)
	}
}

func TestLatestPicksTheHighestVersionNumber(t *testing.T) {
	ix := mustBuild(t, fixture()...)
	for _, urn := range []string{ageLatest, "urn%3Apub%3Adataelement%3A1%3Alatest", "urn:pub:dataelement:01:latest"} {
		de, err := ix.DataElement(Anonymous{}, urn, LangOrder{})
		if err != nil {
			t.Fatalf("DataElement(%s): %v", urn, err)
		}
		if got := de.GetIdentification().GetUrn(); got != age10 {
			t.Errorf("DataElement(%s) is %s, want %s (10 > 9 > 1)", urn, got, age10)
		}
		if got := de.GetValidation().GetValidationData(); got != "0<=x<=120" {
			t.Errorf("DataElement(%s) has the validation %q of another version", urn, got)
		}
	}
	// Older versions stay reachable by their own URN.
	for urn, data := range map[string]string{age1: "0<=x<=150", age9: "0<=x<=130", age10: "0<=x<=120"} {
		v, err := ix.Validation(Anonymous{}, urn, LangOrder{})
		if err != nil {
			t.Fatalf("Validation(%s): %v", urn, err)
		}
		if v.GetValidationData() != data {
			t.Errorf("Validation(%s) = %q, want %q", urn, v.GetValidationData(), data)
		}
	}
	ml, err := ix.GroupMembers(Anonymous{}, "urn:pub:dataelementgroup:1:latest", Page{}, LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	assertStrings(t, "members of the latest group", ids(ml), []string{height, age10})
}

// The newest version wins whatever order the versions are stored in.
func TestLatestIndependentOfStoredOrder(t *testing.T) {
	versions := []int{2, 10, 9, 1, 11, 3}
	for shift := range versions {
		var els []*mdrv1.Element
		for i := range versions {
			v := versions[(i+shift)%len(versions)]
			els = append(els, elem(fmt.Sprintf("urn:ns:dataelement:1:%d", v), des("de", fmt.Sprintf("Version %d", v), "")))
		}
		ix := mustBuild(t, nsDef("ns", nil, els...))
		de, err := ix.DataElement(Anonymous{}, "urn:ns:dataelement:1:latest", LangOrder{})
		if err != nil {
			t.Fatal(err)
		}
		if got := de.GetIdentification().GetUrn(); got != "urn:ns:dataelement:1:11" {
			t.Errorf("stored %v rotated by %d: latest is %s", versions, shift, got)
		}
		ml, err := ix.Search(Anonymous{}, "ns", "version", Page{}, LangOrder{})
		if err != nil {
			t.Fatal(err)
		}
		assertStrings(t, "search", ids(ml), []string{"urn:ns:dataelement:1:11"})
	}
}

func TestGroupMembers(t *testing.T) {
	ix := mustBuild(t, fixture()...)
	ml, err := ix.GroupMembers(Anonymous{}, patient, Page{}, LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	assertStrings(t, "members of "+patient, ids(ml), []string{measures1, sex, birthday, plain})
	if ml.GetTotalcount() != 4 {
		t.Errorf("totalcount = %d", ml.GetTotalcount())
	}
	if ml.GetResults()[0].GetType() != "DATAELEMENTGROUP" || ml.GetResults()[1].GetType() != "DATAELEMENT" {
		t.Errorf("member types %v", ml.GetResults())
	}
	page, err := ix.GroupMembers(Anonymous{}, patient, Page{Offset: 1, Limit: 2}, LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	assertStrings(t, "page of "+patient, ids(page), []string{sex, birthday})
	if page.GetTotalcount() != 4 {
		t.Errorf("totalcount of a page = %d, want 4", page.GetTotalcount())
	}
}

func TestDataElementQueries(t *testing.T) {
	ix := mustBuild(t, fixture()...)
	de, err := ix.DataElement(Anonymous{}, sex, LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	assertStrings(t, "designations", langsOf(de.GetDesignations()), []string{"de", "en"})
	v := de.GetValidation()
	if len(v.GetPermissibleValues()) != 2 || v.GetPermissibleValues()[0].GetValue() != "m" {
		t.Fatalf("permissible values %v", v.GetPermissibleValues())
	}
	if v.GetValidationType() != "NONE" {
		t.Errorf("empty validation type is %q, want NONE", v.GetValidationType())
	}
	// Meanings are filled from the permissible values.
	assertStrings(t, "meanings", langsOf(v.GetMeanings()), []string{"de", "en", "de", "en"})

	en, err := ix.DataElement(Anonymous{}, sex, ParseAcceptLanguage("en"))
	if err != nil {
		t.Fatal(err)
	}
	assertStrings(t, "designations for en", langsOf(en.GetDesignations()), []string{"en", "de"})
	assertStrings(t, "meanings of m for en", langsOf(en.GetValidation().GetPermissibleValues()[0].GetMeanings()), []string{"en", "de"})
	// The pairing of meanings with values is kept.
	assertStrings(t, "meanings for en", langsOf(en.GetValidation().GetMeanings()), []string{"de", "en", "de", "en"})
	if en.GetIdentification().GetUrn() != sex {
		t.Errorf("identification %v", en.GetIdentification())
	}

	// Nothing of the shared element changed.
	again, err := ix.DataElement(Anonymous{}, sex, LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(again, de) {
		t.Errorf("data element changed by a sorted query:\n%v\nwant\n%v", again, de)
	}
	assertStrings(t, "designations afterwards", langsOf(again.GetDesignations()), []string{"de", "en"})
	assertStrings(t, "meanings of m afterwards", langsOf(again.GetValidation().GetPermissibleValues()[0].GetMeanings()), []string{"de", "en"})

	ui, err := ix.UiModel(Anonymous{}, sex, ParseAcceptLanguage("en"))
	if err != nil {
		t.Fatal(err)
	}
	assertStrings(t, "ui model designations", langsOf(ui.GetDesignations()), []string{"en", "de"})
	if len(ui.GetValidation().GetPermissibleValues()) != 2 {
		t.Errorf("ui model validation %v", ui.GetValidation())
	}

	labels, err := ix.Labels(Anonymous{}, visit, KindRecord, ParseAcceptLanguage("en"))
	if err != nil {
		t.Fatal(err)
	}
	assertStrings(t, "labels of "+visit, langsOf(labels), []string{"en", "de"})

	// A data element stored without a validation reads as a described string.
	pv, err := ix.Validation(Anonymous{}, plain, LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	if pv.GetValueDomainType() != "DESCRIBED" || pv.GetDatatype() != "STRING" || pv.GetValidationType() != "NONE" {
		t.Errorf("default validation %v", pv)
	}
}

func TestSlots(t *testing.T) {
	defs := fixture()
	defs[0].Elements[0].Slots = []*mdrv1.Slot{{SlotName: "unit", SlotValue: "years"}}
	ix := mustBuild(t, defs...)
	slots, err := ix.Slots(Anonymous{}, age1)
	if err != nil {
		t.Fatal(err)
	}
	if len(slots) != 1 || slots[0].GetSlotName() != "unit" || slots[0].GetSlotValue() != "years" {
		t.Errorf("slots %v", slots)
	}
	slots, err = ix.Slots(Anonymous{}, age10)
	if err != nil || len(slots) != 0 {
		t.Errorf("slots of %s: %v %v", age10, slots, err)
	}
}

func TestCheckValue(t *testing.T) {
	ix := mustBuild(t, fixture()...)
	cases := []struct {
		urn, value string
		canonical  string
		valid      bool
	}{
		{ageLatest, "0", age10, true},
		{ageLatest, "120", age10, true},
		{ageLatest, "121", age10, false},
		{ageLatest, "-1", age10, false},
		{ageLatest, "140", age10, false}, // allowed by version 1 only
		{age1, "140", age1, true},
		{age9, "125", age9, true},
		{"urn%3Apub%3Adataelement%3A1%3Alatest", "5", age10, true},
		{height, "180.5", height, true},
		{height, "300.1", height, false},
		{physician, "Ärzte", physician, true}, // five runes, six bytes
		{physician, "Ärztin", physician, false},
		{sex, "m", sex, true},
		{sex, "x", sex, false},
		{birthday, "29.02.2020", birthday, true},
		{birthday, "31.02.2020", birthday, false},
		{plain, "anything at all", plain, true},
		// Callers are services: private namespaces are checked too.
		{secret, "42", secret, true},
		{secret, "x", secret, false},
	}
	for _, c := range cases {
		canonical, err := ix.CheckValue(c.urn, c.value)
		if canonical != c.canonical {
			t.Errorf("CheckValue(%s, %q) canonical = %q, want %q", c.urn, c.value, canonical, c.canonical)
		}
		if (err == nil) != c.valid {
			t.Errorf("CheckValue(%s, %q) = %v, want valid %v", c.urn, c.value, err, c.valid)
		}
		if err != nil && (IsNotFound(err) || IsInvalid(err)) {
			t.Errorf("CheckValue(%s, %q): a bad value is reported as %v", c.urn, c.value, err)
		}
	}

	for _, urn := range []string{patient, visit, "urn:pub:dataelement:99:1", "urn:nosuch:dataelement:1:1"} {
		canonical, err := ix.CheckValue(urn, "1")
		assertErr(t, err, ErrNotFound, "")
		if canonical != "" {
			t.Errorf("CheckValue(%s) canonical %q with not found", urn, canonical)
		}
	}
	for _, urn := range []string{"", "garbage", "urn:pub:dataelement:1"} {
		_, err := ix.CheckValue(urn, "1")
		assertErr(t, err, ErrInvalid, "")
	}
}

// The index is shared between requests: concurrent queries must neither race
// (go test -race) nor see each other's language ordering.
func TestConcurrentQueries(t *testing.T) {
	ix := mustBuild(t, fixture()...)
	orders := []LangOrder{{}, ParseAcceptLanguage("en"), ParseAcceptLanguage("fr,en;q=0.5"), ParseAcceptLanguage("de")}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			lo := orders[g%len(orders)]
			for i := 0; i < 50; i++ {
				if _, err := ix.DataElement(Anonymous{}, sex, lo); err != nil {
					errs <- err
					return
				}
				if _, err := ix.NamespaceMembers(Anonymous{}, "pub", Page{Offset: i % 3}, lo); err != nil {
					errs <- err
					return
				}
				if _, err := ix.Search(Anonymous{}, "pub", "e", Page{Limit: 2}, lo); err != nil {
					errs <- err
					return
				}
				if _, err := ix.RecordMembers(Anonymous{}, visit, Page{}, lo); err != nil {
					errs <- err
					return
				}
				ix.Namespaces(seeing{"geheim": true}, lo)
				if _, err := ix.CheckValue(ageLatest, "42"); err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	de, err := ix.DataElement(Anonymous{}, sex, LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	assertStrings(t, "stored designations after concurrent sorting", langsOf(de.GetDesignations()), []string{"de", "en"})
}
