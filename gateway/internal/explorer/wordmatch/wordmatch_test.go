package wordmatch

import (
	"slices"
	"testing"
)

func TestTier(t *testing.T) {
	age := Query("age")
	for _, tc := range []struct {
		q           string
		names, defs []string
		want        int
	}{
		{"age", []string{"Donor age", "Spenderalter"}, nil, NameWord},
		{"age", []string{"Age at diagnosis", "Alter bei Diagnose"}, nil, NameWord},
		{"Age", []string{"AGE AT DIAGNOSIS"}, nil, NameWord},
		{"age", []string{"Manager"}, nil, NoMatch},
		{"age", []string{"Contact name"}, []string{"The manager's name"}, NoMatch},
		{"age", []string{"Storage temperature", "Lagertemperatur"}, nil, NoMatch},
		{"alt", []string{"Age at diagnosis", "Alter bei Diagnose"}, nil, NamePrefix},
		{"alter", []string{"Donor age", "Spenderalter"}, nil, NoMatch},
		{"diag", []string{"Age at diagnosis", "Alter bei Diagnose"}, nil, NamePrefix},
		{"gewebe", []string{"Sample type", "Probenart"}, []string{"Art der Probe, z.B. Gewebe"}, Definition},
		{"über", []string{"Überleben"}, nil, NamePrefix},
		{"age diag", []string{"Age at diagnosis"}, nil, NamePrefix},
		{"age diag", []string{"Age at diagnosis"}, []string{"in years"}, NamePrefix},
		{"age years", []string{"Age at diagnosis"}, []string{"in years"}, Definition},
		{"age years", []string{"Manager"}, []string{"in years"}, NoMatch},
		{"icd-10", []string{"Diagnosis ICD-10"}, nil, NameWord},
		{"", []string{"Donor age"}, nil, NoMatch},
	} {
		if got := Tier(Query(tc.q), tc.names, tc.defs); got != tc.want {
			t.Errorf("Tier(%q, %q, %q) = %d, want %d", tc.q, tc.names, tc.defs, got, tc.want)
		}
	}
	if Tier(age, []string{"Manager"}, []string{"Storage"}) != NoMatch {
		t.Error("a word's inside matched")
	}
}

func TestQueryAndLongest(t *testing.T) {
	if q := Query("  Age, at-diagnosis! "); !slices.Equal(q, []string{"age", "at", "diagnosis"}) {
		t.Fatalf("Query: %q", q)
	}
	if l := Longest(Query("ab Größe c")); l != "größe" {
		t.Fatalf("Longest: %q", l)
	}
	if n := len(Query("a b c d e f g h i j k")); n != MaxQuery {
		t.Fatalf("Query keeps %d words", n)
	}
}

// FuzzTier: any query and text is matched without a panic, and a match
// has the query's words in the texts.
func FuzzTier(f *testing.F) {
	f.Add("age", "Donor age", "in years")
	f.Add("über al", "Überleben Alter", "")
	f.Fuzz(func(t *testing.T, q, name, def string) {
		tier := Tier(Query(q), []string{name}, []string{def})
		if tier < NoMatch && len(Query(q)) == 0 {
			t.Fatal("an empty query matched")
		}
	})
}
