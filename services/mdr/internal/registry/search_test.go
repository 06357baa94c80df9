package registry

import (
	"fmt"
	"testing"
)

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
