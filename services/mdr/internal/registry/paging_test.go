package registry

import (
	"fmt"
	"testing"
)

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
