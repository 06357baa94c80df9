package registry

import (
	"fmt"
	"testing"
)

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
