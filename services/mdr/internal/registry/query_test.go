package registry

import (
	"fmt"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	mdrv1 "fris.dev/proto/mdr/v1"
)

var pubRoots = []string{patient, sex, visit, age10, measures2}

func TestNamespacesVisibility(t *testing.T) {
	ix := mustBuild(t, fixture()...)
	cases := []struct {
		name string
		v    Viewer
		want []string
	}{
		{"anonymous sees public ones, by name", Anonymous{}, []string{"alpha", "pub"}},
		{"viewer of another namespace", seeing{"other": true}, []string{"alpha", "pub"}},
		{"viewer of the private one", seeing{"geheim": true}, []string{"alpha", "geheim", "pub"}},
	}
	for _, c := range cases {
		assertStrings(t, c.name, namesOf(ix.Namespaces(c.v, LangOrder{})), c.want)
	}
	for _, n := range ix.Namespaces(Anonymous{}, LangOrder{}) {
		if n.GetName() == "pub" {
			if !n.GetWriteable() {
				t.Error("pub lost writeable")
			}
			assertStrings(t, "pub designations", langsOf(n.GetDesignations()), []string{"de", "en"})
		}
	}
	for _, n := range ix.Namespaces(Anonymous{}, ParseAcceptLanguage("en")) {
		if n.GetName() == "pub" {
			if !n.GetWriteable() {
				t.Error("pub lost writeable when sorted")
			}
			assertStrings(t, "pub designations for en", langsOf(n.GetDesignations()), []string{"en", "de"})
		}
	}
	// Sorting for one caller must not reorder what the next one gets.
	for _, n := range ix.Namespaces(Anonymous{}, LangOrder{}) {
		if n.GetName() == "pub" {
			assertStrings(t, "pub designations afterwards", langsOf(n.GetDesignations()), []string{"de", "en"})
		}
	}
}

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

func TestPaging(t *testing.T) {
	ix := mustBuild(t, fixture()...)
	cases := []struct {
		p    Page
		want []string
	}{
		{Page{}, pubRoots},
		{Page{Offset: 0, Limit: 2}, pubRoots[:2]},
		{Page{Offset: 2, Limit: 2}, pubRoots[2:4]},
		{Page{Offset: 4, Limit: 2}, pubRoots[4:]},
		{Page{Offset: 3}, pubRoots[3:]},
		{Page{Limit: 1}, pubRoots[:1]},
		{Page{Limit: 5}, pubRoots},
		{Page{Limit: 100}, pubRoots},
		{Page{Offset: 5}, []string{}},
		{Page{Offset: 100, Limit: 1}, []string{}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("offset=%d,limit=%d", c.p.Offset, c.p.Limit), func(t *testing.T) {
			ml, err := ix.NamespaceMembers(Anonymous{}, "pub", c.p, LangOrder{})
			if err != nil {
				t.Fatal(err)
			}
			assertStrings(t, "namespace members", ids(ml), c.want)
			if ml.GetTotalcount() != int32(len(pubRoots)) {
				t.Errorf("totalcount = %d, want all %d", ml.GetTotalcount(), len(pubRoots))
			}

			hits, err := ix.Search(Anonymous{}, "pub", "e", c.p, LangOrder{})
			if err != nil {
				t.Fatal(err)
			}
			all, err := ix.Search(Anonymous{}, "pub", "e", Page{}, LangOrder{})
			if err != nil {
				t.Fatal(err)
			}
			assertStrings(t, "search page", ids(hits), pageOf(ids(all), c.p))
			if hits.GetTotalcount() != all.GetTotalcount() || int(all.GetTotalcount()) != len(all.GetResults()) {
				t.Errorf("search totalcount %d of a page, %d without paging with %d results", hits.GetTotalcount(), all.GetTotalcount(), len(all.GetResults()))
			}
		})
	}
}

func TestPageOf(t *testing.T) {
	xs := []int{1, 2, 3}
	cases := []struct {
		p    Page
		want []int
	}{
		{Page{}, []int{1, 2, 3}},
		{Page{Offset: 1}, []int{2, 3}},
		{Page{Offset: 1, Limit: 1}, []int{2}},
		{Page{Offset: 2, Limit: 5}, []int{3}},
		{Page{Offset: 3}, nil},
		{Page{Offset: 4, Limit: 1}, nil},
	}
	for _, c := range cases {
		got := pageOf(xs, c.p)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("pageOf(%v, %+v) = %v, want %v", xs, c.p, got, c.want)
		}
	}
	if fmt.Sprint(xs) != "[1 2 3]" {
		t.Errorf("pageOf changed its input: %v", xs)
	}
}

func TestRecordMembersPaging(t *testing.T) {
	ix := mustBuild(t, fixture()...)
	cases := []struct {
		p     Page
		want  []string
		order []int32
	}{
		{Page{}, []string{birthday, age10, sex}, []int32{1, 2, 3}},
		{Page{Offset: 1}, []string{age10, sex}, []int32{2, 3}},
		{Page{Offset: 1, Limit: 1}, []string{age10}, []int32{2}},
		{Page{Limit: 2}, []string{birthday, age10}, []int32{1, 2}},
		{Page{Offset: 3}, []string{}, nil},
	}
	for _, c := range cases {
		rms, err := ix.RecordMembers(Anonymous{}, visit, c.p, LangOrder{})
		if err != nil {
			t.Fatal(err)
		}
		assertStrings(t, fmt.Sprintf("record members %+v", c.p), recordIDs(rms), c.want)
		var order []int32
		for _, m := range rms {
			order = append(order, m.GetOrder())
			if m.GetType() != "DATAELEMENT" {
				t.Errorf("record member %s has type %q", m.GetId(), m.GetType())
			}
			if len(m.GetDesignations()) == 0 {
				t.Errorf("record member %s has no designations", m.GetId())
			}
		}
		if fmt.Sprint(order) != fmt.Sprint(c.order) {
			t.Errorf("record member order %+v = %v, want %v", c.p, order, c.order)
		}
	}
	rms, err := ix.RecordMembers(Anonymous{}, visit, Page{}, ParseAcceptLanguage("en"))
	if err != nil {
		t.Fatal(err)
	}
	assertStrings(t, "designations of the record's "+sex+" for en", langsOf(rms[2].GetDesignations()), []string{"en", "de"})
}

func TestNegativePagingIsInvalid(t *testing.T) {
	ix := mustBuild(t, fixture()...)
	for _, p := range []Page{{Offset: -1}, {Limit: -1}, {Offset: -5, Limit: -5}, {Offset: 1, Limit: -1}} {
		calls := map[string]func() error{
			"NamespaceMembers": func() error { _, err := ix.NamespaceMembers(Anonymous{}, "pub", p, LangOrder{}); return err },
			"Search":           func() error { _, err := ix.Search(Anonymous{}, "pub", "alter", p, LangOrder{}); return err },
			"GroupMembers":     func() error { _, err := ix.GroupMembers(Anonymous{}, patient, p, LangOrder{}); return err },
			"RecordMembers":    func() error { _, err := ix.RecordMembers(Anonymous{}, visit, p, LangOrder{}); return err },
		}
		for name, call := range calls {
			t.Run(fmt.Sprintf("%s %+v", name, p), func(t *testing.T) {
				err := call()
				assertErr(t, err, ErrInvalid, "negative")
				if IsNotFound(err) || !IsInvalid(err) {
					t.Errorf("IsInvalid/IsNotFound misclassify %v", err)
				}
			})
		}
	}
}

func TestSearch(t *testing.T) {
	ix := mustBuild(t, fixture()...)
	cases := []struct {
		name, query string
		want        []string
	}{
		{"designation", "alter", []string{age10}},
		{"upper case query", "ALTER", []string{age10}},
		{"mixed case, spaces trimmed", "  Besuch ", []string{visit}},
		{"definition", "in jahren", []string{age10}},
		{"other language", "physician", []string{physician}},
		{"umlaut query lower", "ärztin", []string{physician}},
		{"umlaut query upper", "ÄRZTIN", []string{physician}},
		{"umlaut in the definition", "BEHANDELNDE ÄRZTIN", []string{physician}},
		{"ß as stored", "größe", []string{height}},
		{"ß with capital letters", "GRÖßE", []string{height}},
		{"definition with ß", "KÖRPERGRÖßE", []string{height}},
		// strings.ToLower folds case letter by letter; it does not equate ß
		// and ss.
		{"ss does not match ß", "GRÖSSE", []string{}},
		{"ss lower does not match ß", "grösse", []string{}},
		{"older version only", "uralt", []string{}},
		{"older version definition", "neunte fassung", []string{}},
		{"older group version", "old measurements", []string{}},
		{"newest group version", "messwerte", []string{measures2}},
		{"group and record", "patient", []string{patient}},
		{"many hits in stored order", "e", []string{age10, height, physician, sex, birthday, plain, measures2, patient, visit}},
		{"no hit", "xyz", []string{}},
		{"private namespace not searched", "geheim", []string{}},
		{"designation and definition are not joined", "alteralter", []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ml, err := ix.Search(Anonymous{}, "pub", c.query, Page{}, LangOrder{})
			if err != nil {
				t.Fatal(err)
			}
			assertStrings(t, fmt.Sprintf("Search(%q)", c.query), ids(ml), c.want)
			if int(ml.GetTotalcount()) != len(c.want) {
				t.Errorf("totalcount = %d, want %d", ml.GetTotalcount(), len(c.want))
			}
		})
	}
}

func TestSearchResults(t *testing.T) {
	ix := mustBuild(t, fixture()...)
	ml, err := ix.Search(Anonymous{}, "pub", "besuch", Page{}, ParseAcceptLanguage("en"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ml.GetResults()) != 1 {
		t.Fatalf("results %v", ml)
	}
	m := ml.GetResults()[0]
	if m.GetId() != visit || m.GetType() != "RECORD" {
		t.Errorf("hit = %s %s", m.GetId(), m.GetType())
	}
	assertStrings(t, "designations for en", langsOf(m.GetDesignations()), []string{"en", "de"})
}

func TestSearchErrors(t *testing.T) {
	ix := mustBuild(t, fixture()...)
	for _, q := range []string{"", "   ", "\t\n"} {
		_, err := ix.Search(Anonymous{}, "pub", q, Page{}, LangOrder{})
		assertErr(t, err, ErrInvalid, "query")
	}
	_, err := ix.Search(Anonymous{}, "nosuch", "alter", Page{}, LangOrder{})
	assertErr(t, err, ErrNotFound, "nosuch")
	_, err = ix.Search(Anonymous{}, "geheim", "geheim", Page{}, LangOrder{})
	assertErr(t, err, ErrNotFound, "geheim")
	_, err = ix.Search(seeing{"pub": true}, "geheim", "geheim", Page{}, LangOrder{})
	assertErr(t, err, ErrNotFound, "geheim")

	ml, err := ix.Search(seeing{"geheim": true}, "geheim", "GRÖßE", Page{}, LangOrder{})
	if err != nil {
		t.Fatal(err)
	}
	assertStrings(t, "search in the private namespace", ids(ml), []string{secret})
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

func TestPrivateNamespace(t *testing.T) {
	ix := mustBuild(t, fixture()...)
	viewer := seeing{"geheim": true}
	others := []Viewer{Anonymous{}, seeing{}, seeing{"pub": true, "geheimer": true}}

	calls := map[string]func(Viewer) error{
		"NamespaceMembers": func(v Viewer) error { _, err := ix.NamespaceMembers(v, "geheim", Page{}, LangOrder{}); return err },
		"DataElement":      func(v Viewer) error { _, err := ix.DataElement(v, secret, LangOrder{}); return err },
		"DataElement latest": func(v Viewer) error {
			_, err := ix.DataElement(v, "urn:geheim:dataelement:1:latest", LangOrder{})
			return err
		},
		"Labels":       func(v Viewer) error { _, err := ix.Labels(v, secret, KindDataElement, LangOrder{}); return err },
		"Validation":   func(v Viewer) error { _, err := ix.Validation(v, secret, LangOrder{}); return err },
		"UiModel":      func(v Viewer) error { _, err := ix.UiModel(v, secret, LangOrder{}); return err },
		"Slots":        func(v Viewer) error { _, err := ix.Slots(v, secret); return err },
		"GroupMembers": func(v Viewer) error { _, err := ix.GroupMembers(v, secretGrp, Page{}, LangOrder{}); return err },
		"Search":       func(v Viewer) error { _, err := ix.Search(v, "geheim", "geheim", Page{}, LangOrder{}); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			if err := call(viewer); err != nil {
				t.Errorf("viewer of geheim: %v", err)
			}
			for _, v := range others {
				err := call(v)
				assertErr(t, err, ErrNotFound, "")
				if IsInvalid(err) {
					t.Errorf("%T: hidden namespace answers invalid: %v", v, err)
				}
			}
		})
	}
	// Hidden looks exactly like absent.
	_, hidden := ix.NamespaceMembers(Anonymous{}, "geheim", Page{}, LangOrder{})
	_, absent := ix.NamespaceMembers(Anonymous{}, "nosuch", Page{}, LangOrder{})
	if hidden == nil || absent == nil || !IsNotFound(hidden) || !IsNotFound(absent) {
		t.Errorf("hidden %v, absent %v", hidden, absent)
	}
}

func TestLookupOfTheWrongKindIsNotFound(t *testing.T) {
	ix := mustBuild(t, fixture()...)
	cases := []struct {
		name string
		call func() error
	}{
		{"data element as group", func() error { _, err := ix.GroupMembers(Anonymous{}, age10, Page{}, LangOrder{}); return err }},
		{"data element as record", func() error { _, err := ix.RecordMembers(Anonymous{}, age10, Page{}, LangOrder{}); return err }},
		{"group as record", func() error { _, err := ix.RecordMembers(Anonymous{}, patient, Page{}, LangOrder{}); return err }},
		{"record as group", func() error { _, err := ix.GroupMembers(Anonymous{}, visit, Page{}, LangOrder{}); return err }},
		{"group as data element", func() error { _, err := ix.DataElement(Anonymous{}, patient, LangOrder{}); return err }},
		{"record as data element", func() error { _, err := ix.Validation(Anonymous{}, visit, LangOrder{}); return err }},
		{"labels of a data element as group", func() error { _, err := ix.Labels(Anonymous{}, age10, KindGroup, LangOrder{}); return err }},
		{"labels of a group as record", func() error { _, err := ix.Labels(Anonymous{}, patient, KindRecord, LangOrder{}); return err }},
		{"group as data element for UiModel", func() error { _, err := ix.UiModel(Anonymous{}, patient, LangOrder{}); return err }},
		{"group as data element for Slots", func() error { _, err := ix.Slots(Anonymous{}, patient); return err }},
		{"no such version", func() error {
			_, err := ix.DataElement(Anonymous{}, "urn:pub:dataelement:1:2", LangOrder{})
			return err
		}},
		{"no such id", func() error {
			_, err := ix.DataElement(Anonymous{}, "urn:pub:dataelement:99:latest", LangOrder{})
			return err
		}},
		{"no such namespace", func() error {
			_, err := ix.DataElement(Anonymous{}, "urn:nosuch:dataelement:1:1", LangOrder{})
			return err
		}},
		{"no such namespace members", func() error { _, err := ix.NamespaceMembers(Anonymous{}, "nosuch", Page{}, LangOrder{}); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			assertErr(t, err, ErrNotFound, "")
			if IsInvalid(err) {
				t.Errorf("%v is also invalid", err)
			}
		})
	}
	for _, bad := range []string{"", "urn:pub:dataelement:1", "urn:pub:element:1:1", "urn:pub:dataelement:0:1", "urn:pub:dataelement:1:%zz"} {
		_, err := ix.DataElement(Anonymous{}, bad, LangOrder{})
		assertErr(t, err, ErrInvalid, "")
		if IsNotFound(err) {
			t.Errorf("malformed %q answers not found", bad)
		}
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

// Groups and records may hold members of other namespaces. Members from a
// private namespace must not show through a public group or record to callers
// who may not see that namespace: to them it does not exist.
func TestPrivateMembersOfPublicGroupsAreHidden(t *testing.T) {
	const (
		mixedGroup  = "urn:pub:dataelementgroup:3:1"
		mixedRecord = "urn:pub:record:2:1"
	)
	defs := fixture()
	defs[0].Elements = append(defs[0].Elements,
		withMembers(elem(mixedGroup, des("de", "Gemischt", "")), height, secret, sex, secretGrp),
		withMembers(elem(mixedRecord, des("de", "Gemischter Satz", "")), secret, birthday, sex),
	)
	ix := mustBuild(t, defs...)

	cases := []struct {
		name        string
		v           Viewer
		group       []string
		record      []string
		recordOrder string
	}{
		{"anonymous", Anonymous{}, []string{height, sex}, []string{birthday, sex}, "[1 2]"},
		{"viewer of another namespace", seeing{"pub": true}, []string{height, sex}, []string{birthday, sex}, "[1 2]"},
		{"viewer of the private namespace", seeing{"geheim": true}, []string{height, secret, sex, secretGrp}, []string{secret, birthday, sex}, "[1 2 3]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ml, err := ix.GroupMembers(c.v, mixedGroup, Page{}, LangOrder{})
			if err != nil {
				t.Fatal(err)
			}
			assertStrings(t, "group members", ids(ml), c.group)
			if int(ml.GetTotalcount()) != len(c.group) {
				t.Errorf("totalcount = %d, want %d", ml.GetTotalcount(), len(c.group))
			}
			page, err := ix.GroupMembers(c.v, mixedGroup, Page{Offset: 1, Limit: 1}, LangOrder{})
			if err != nil {
				t.Fatal(err)
			}
			assertStrings(t, "second group member", ids(page), c.group[1:2])
			if int(page.GetTotalcount()) != len(c.group) {
				t.Errorf("totalcount of a page = %d, want %d", page.GetTotalcount(), len(c.group))
			}

			rms, err := ix.RecordMembers(c.v, mixedRecord, Page{}, LangOrder{})
			if err != nil {
				t.Fatal(err)
			}
			assertStrings(t, "record members", recordIDs(rms), c.record)
			var order []int32
			for _, m := range rms {
				order = append(order, m.GetOrder())
			}
			if fmt.Sprint(order) != c.recordOrder {
				t.Errorf("record member order = %v, want %s (no gaps where hidden members are)", order, c.recordOrder)
			}
			rpage, err := ix.RecordMembers(c.v, mixedRecord, Page{Offset: 1, Limit: 1}, LangOrder{})
			if err != nil {
				t.Fatal(err)
			}
			assertStrings(t, "second record member", recordIDs(rpage), c.record[1:2])
			if len(rpage) == 1 && rpage[0].GetOrder() != 2 {
				t.Errorf("second record member has order %d", rpage[0].GetOrder())
			}
		})
	}
	// Values are still checked against the private element: callers are
	// services.
	if _, err := ix.CheckValue(secret, "42"); err != nil {
		t.Errorf("CheckValue: %v", err)
	}
}
