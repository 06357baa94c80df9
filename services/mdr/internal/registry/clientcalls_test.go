package registry

import (
	"testing"

	mdrv1 "fris.dev/proto/mdr/v1"
)

const (
	diagnosis    = "urn:pub:dataelement:7:2"
	diagnosisCat = "urn:pub:catalog:7:2"
)

// withCatalogue adds a catalogue-valued data element to pub, its catalogue
// held as permissible values, and gives measures2 slots.
func withCatalogue() []*mdrv1.NamespaceDef {
	defs := fixture()
	pub := defs[0]
	pub.Elements = append(pub.Elements, withValidation(elem(diagnosis, des("de", "Diagnose", ""), des("en", "Diagnosis", "")),
		&mdrv1.Validation{ValueDomainType: "CATALOG", Datatype: "CATALOG", PermissibleValues: []*mdrv1.PermissibleValue{
			{Value: "C00", Meanings: []*mdrv1.Designation{des("de", "Lippe", ""), des("en", "Lip", "")}},
			{Value: "C01", Meanings: []*mdrv1.Designation{des("en", "Tongue", "")}},
		}}))
	for _, el := range pub.Elements {
		if el.GetUrn() == measures2 {
			el.Slots = []*mdrv1.Slot{{SlotName: "order", SlotValue: "2"}}
		}
		if el.GetUrn() == height {
			el.Status = "draft"
		}
	}
	return defs
}

func resultIDs(rl *mdrv1.ResultList) []string {
	out := []string{}
	for _, r := range rl.GetResults() {
		out = append(out, r.GetId())
	}
	return out
}

func TestGroupSlots(t *testing.T) {
	ix := mustBuild(t, withCatalogue()...)
	got, err := ix.GroupSlots(Anonymous{}, measures2)
	if err != nil || len(got) != 1 || got[0].GetSlotName() != "order" || got[0].GetSlotValue() != "2" {
		t.Fatalf("GroupSlots = %v, %v", got, err)
	}
	if got, err := ix.GroupSlots(Anonymous{}, patient); err != nil || len(got) != 0 {
		t.Errorf("group without slots = %v, %v", got, err)
	}
	_, err = ix.GroupSlots(Anonymous{}, height)
	assertErr(t, err, ErrNotFound, "not a dataelementgroup")
	_, err = ix.GroupSlots(Anonymous{}, secretGrp)
	assertErr(t, err, ErrNotFound, "")
	if _, err := ix.GroupSlots(seeing{"geheim": true}, secretGrp); err != nil {
		t.Errorf("granted private group: %v", err)
	}
	_, err = ix.GroupSlots(Anonymous{}, "urn:pub:dataelementgroup:x:1")
	assertErr(t, err, ErrInvalid, "")
}

func TestUserMembers(t *testing.T) {
	ix := mustBuild(t, withCatalogue()...)
	got, err := ix.UserMembers(Anonymous{}, Page{}, LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	// alpha has no roots; geheim is private; pub's roots in stored order.
	assertStrings(t, "anonymous", resultIDs(got), []string{patient, sex, visit, age10, measures2})
	if got.GetTotalcount() != publicRoot {
		t.Errorf("totalcount = %d", got.GetTotalcount())
	}
	r := got.GetResults()[0]
	if r.GetType() != "DATAELEMENTGROUP" || r.GetIdentification().GetUrn() != patient || r.GetIdentification().GetStatus() != StatusReleased {
		t.Errorf("first result = %v", r)
	}
	granted, err := ix.UserMembers(seeing{"geheim": true}, Page{Offset: 1, Limit: 2}, ParseAcceptLanguage("en"))
	if err != nil {
		t.Fatal(err)
	}
	// geheim sorts before pub.
	assertStrings(t, "granted page", resultIDs(granted), []string{secretGrp, patient})
	if granted.GetTotalcount() != publicRoot+2 {
		t.Errorf("granted totalcount = %d", granted.GetTotalcount())
	}
	assertStrings(t, "languages", langsOf(granted.GetResults()[1].GetDesignations()), []string{"en", "de"})
	_, err = ix.UserMembers(Anonymous{}, Page{Offset: -1}, LangOrder{})
	assertErr(t, err, ErrInvalid, "")
}

func TestParseKinds(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []string
	}{
		{nil, nil},
		{[]string{"dataelement", "dataelementgroup"}, []string{KindDataElement, KindGroup}},
		{[]string{"[dataelement, dataelementgroup]"}, []string{KindDataElement, KindGroup}},
		{[]string{"Record,dataelement"}, []string{KindRecord, KindDataElement}},
		{[]string{"[]", ""}, nil},
	} {
		got, err := ParseKinds(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%q = %v, want %q", tc.in, got, tc.want)
		}
		for _, k := range tc.want {
			if !got[k] {
				t.Errorf("%q lacks %q", tc.in, k)
			}
		}
	}
	for _, bad := range [][]string{{"catalog"}, {"[dataelement, x]"}, make([]string, 0)} {
		if len(bad) == 0 {
			bad = []string{"dataelement,dataelement,dataelement,dataelement,dataelement,dataelement,dataelement,dataelement,dataelement,dataelement,dataelement,dataelement,dataelement,dataelement,dataelement,dataelement,dataelement"}
		}
		_, err := ParseKinds(bad)
		assertErr(t, err, ErrInvalid, "")
	}
}

func TestParseStatus(t *testing.T) {
	for in, want := range map[string]string{"": "", "released": StatusReleased, " Draft ": StatusDraft, "OUTDATED": StatusOutdated} {
		if got, err := ParseStatus(in); err != nil || got != want {
			t.Errorf("ParseStatus(%q) = %q, %v", in, got, err)
		}
	}
	_, err := ParseStatus("published")
	assertErr(t, err, ErrInvalid, "published")
}

func TestSearchLocal(t *testing.T) {
	ix := mustBuild(t, withCatalogue()...)
	kinds, _ := ParseKinds([]string{"[dataelement, dataelementgroup]"})
	// "mess" matches the groups and nothing else; "größe" matches height
	// (draft) and, privately, the secret element.
	got, err := ix.SearchLocal(Anonymous{}, "MESS", StatusReleased, kinds, Page{}, LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	assertStrings(t, "groups", resultIDs(got), []string{measures2})
	got, err = ix.SearchLocal(seeing{"geheim": true}, "größe", "", nil, Page{}, LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	assertStrings(t, "all statuses, granted", resultIDs(got), []string{secret, height})
	if s := got.GetResults()[1].GetIdentification().GetStatus(); s != StatusDraft {
		t.Errorf("height's status = %q", s)
	}
	got, _ = ix.SearchLocal(seeing{"geheim": true}, "größe", StatusReleased, kinds, Page{}, LangOrder{})
	assertStrings(t, "released only", resultIDs(got), []string{secret})
	got, _ = ix.SearchLocal(Anonymous{}, "größe", "", nil, Page{}, LangOrder{})
	assertStrings(t, "anonymous", resultIDs(got), []string{height})
	records, _ := ParseKinds([]string{"record"})
	got, _ = ix.SearchLocal(Anonymous{}, "besuch", "", records, Page{}, LangOrder{})
	assertStrings(t, "records", resultIDs(got), []string{visit})
	got, _ = ix.SearchLocal(Anonymous{}, "besuch", "", kinds, Page{}, LangOrder{})
	assertStrings(t, "records filtered out", resultIDs(got), []string{})
	_, err = ix.SearchLocal(Anonymous{}, "  ", "", nil, Page{}, LangOrder{})
	assertErr(t, err, ErrInvalid, "query")
}

func TestRepresentations(t *testing.T) {
	ix := mustBuild(t, withCatalogue()...)
	got, err := ix.Representations(Anonymous{}, ageLatest, ParseAcceptLanguage("fr"))
	if err != nil {
		t.Fatal(err)
	}
	assertStrings(t, "representations", resultIDs(got), []string{age10})
	if got.GetTotalcount() != 1 || langsOf(got.GetResults()[0].GetDesignations())[0] != "fr" {
		t.Errorf("representations = %v", got)
	}
	_, err = ix.Representations(Anonymous{}, secret, LangOrder{})
	assertErr(t, err, ErrNotFound, "")
	_, err = ix.Representations(Anonymous{}, measures2, LangOrder{})
	assertErr(t, err, ErrNotFound, "")
	_, err = ix.Representations(Anonymous{}, "", LangOrder{})
	assertErr(t, err, ErrInvalid, "urn is required")
	_, err = ix.Representations(Anonymous{}, "urn:pub:dataelement", LangOrder{})
	assertErr(t, err, ErrInvalid, "")
}

func TestCatalogue(t *testing.T) {
	ix := mustBuild(t, withCatalogue()...)
	for _, get := range []func() (*mdrv1.Catalogue, error){
		func() (*mdrv1.Catalogue, error) {
			return ix.Catalogue(Anonymous{}, diagnosis, ParseAcceptLanguage("en"))
		},
		func() (*mdrv1.Catalogue, error) {
			return ix.Catalogue(Anonymous{}, "urn:pub:dataelement:7:latest", ParseAcceptLanguage("en"))
		},
		func() (*mdrv1.Catalogue, error) {
			return ix.CatalogueCodes(Anonymous{}, diagnosisCat, ParseAcceptLanguage("en"))
		},
		func() (*mdrv1.Catalogue, error) {
			return ix.CatalogueCodes(Anonymous{}, "urn%3Apub%3Acatalog%3A7%3A2", ParseAcceptLanguage("en"))
		},
	} {
		c, err := get()
		if err != nil {
			t.Fatal(err)
		}
		root := c.GetRoot()
		if root.GetIdentification().GetUrn() != diagnosisCat || root.GetIdentification().GetStatus() != StatusReleased {
			t.Errorf("root identification = %v", root.GetIdentification())
		}
		assertStrings(t, "root languages", langsOf(root.GetDesignations()), []string{"en", "de"})
		assertStrings(t, "root subCodes", root.GetSubCodes(), []string{"urn:pub:code:7.1:2", "urn:pub:code:7.2:2"})
		if len(c.GetCodes()) != 2 {
			t.Fatalf("codes = %v", c.GetCodes())
		}
		first := c.GetCodes()[0]
		if first.GetCode() != "C00" || !first.GetIsValid() || first.GetIdentification().GetUrn() != "urn:pub:code:7.1:2" || len(first.GetSubCodes()) != 0 {
			t.Errorf("first code = %v", first)
		}
		assertStrings(t, "code languages", langsOf(first.GetDesignations()), []string{"en", "de"})
	}
	_, err := ix.Catalogue(Anonymous{}, sex, LangOrder{})
	assertErr(t, err, ErrNotFound, "has no catalogue")
	_, err = ix.Catalogue(Anonymous{}, secret, LangOrder{})
	assertErr(t, err, ErrNotFound, "")
	_, err = ix.CatalogueCodes(Anonymous{}, "urn:pub:catalog:4:1", LangOrder{})
	assertErr(t, err, ErrNotFound, "has no catalogue")
	_, err = ix.CatalogueCodes(Anonymous{}, "urn:pub:catalog:99:1", LangOrder{})
	assertErr(t, err, ErrNotFound, "no catalogue urn:pub:catalog:99:1")
	_, err = ix.CatalogueCodes(Anonymous{}, "urn:geheim:catalog:1:1", LangOrder{})
	assertErr(t, err, ErrNotFound, "")
	for _, bad := range []string{diagnosis, "urn:pub:catalog:x:1", "urn:pub:catalog:7", "urn%ZZ"} {
		_, err = ix.CatalogueCodes(Anonymous{}, bad, LangOrder{})
		assertErr(t, err, ErrInvalid, "")
	}
}

func FuzzParseKinds(f *testing.F) {
	for _, s := range []string{"dataelement", "[dataelement, dataelementgroup]", "record,,", "[", "]", "[[record]]", "Catalog", ""} {
		f.Add(s, "status")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		kinds, err := ParseKinds([]string{a, b})
		if err != nil {
			if !IsInvalid(err) {
				t.Fatalf("ParseKinds(%q, %q) error %v is not ErrInvalid", a, b, err)
			}
			return
		}
		for k := range kinds {
			switch k {
			case KindDataElement, KindGroup, KindRecord:
			default:
				t.Fatalf("ParseKinds(%q, %q) accepted %q", a, b, k)
			}
		}
		if st, err := ParseStatus(a); err == nil && st != "" && st != StatusDraft && st != StatusReleased && st != StatusOutdated {
			t.Fatalf("ParseStatus(%q) = %q", a, st)
		} else if err != nil && !IsInvalid(err) {
			t.Fatalf("ParseStatus(%q) error %v is not ErrInvalid", a, err)
		}
	})
}

func FuzzCatalogueCodes(f *testing.F) {
	for _, s := range []string{diagnosisCat, "urn:pub:catalog:7:latest", "urn%3Apub%3Acatalog%3A7%3A2", "urn:pub:catalog:4:1", "urn:geheim:catalog:1:1", "urn:pub:catalog:7", "urn:pub:dataelement:7:2", "%", ""} {
		f.Add(s)
	}
	ix := mustBuild(f, withCatalogue()...)
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ix.CatalogueCodes(Anonymous{}, s, LangOrder{})
		if err != nil {
			if !IsInvalid(err) && !IsNotFound(err) {
				t.Fatalf("CatalogueCodes(%q) error %v is neither invalid nor not found", s, err)
			}
			return
		}
		if c.GetRoot().GetIdentification().GetUrn() != diagnosisCat || len(c.GetCodes()) != 2 {
			t.Fatalf("CatalogueCodes(%q) = %v", s, c)
		}
	})
}

// TestCatalogueWithoutCodes: a catalogue element imported from Samply XML,
// whose codes the importer skips, has a catalogue with a root and no codes.
func TestCatalogueWithoutCodes(t *testing.T) {
	defs := fixture()
	defs[0].Elements = append(defs[0].Elements, withValidation(elem("urn:pub:dataelement:8:1", des("en", "Topography", "")),
		&mdrv1.Validation{ValueDomainType: "CATALOG", Datatype: "CATALOG"}))
	ix := mustBuild(t, defs...)
	c, err := ix.CatalogueCodes(Anonymous{}, "urn:pub:catalog:8:1", LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	if c.GetRoot().GetIdentification().GetUrn() != "urn:pub:catalog:8:1" || c.GetCodes() == nil || len(c.GetCodes()) != 0 || c.GetRoot().GetSubCodes() == nil {
		t.Fatalf("catalogue = %v", c)
	}
}
