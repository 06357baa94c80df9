package registry

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	mdrv1 "fris.dev/proto/mdr/v1"
)

// stored builds designations with the given language codes; each carries its
// position so that order among equal languages can be checked.
func stored(langs ...string) []*mdrv1.Designation {
	out := make([]*mdrv1.Designation, len(langs))
	for i, l := range langs {
		out[i] = &mdrv1.Designation{Lang: l, Designation: fmt.Sprint(i)}
	}
	return out
}

// positions lists the stored positions of ds, in ds's order.
func positions(ds []*mdrv1.Designation) string {
	var ps []string
	for _, d := range ds {
		ps = append(ps, d.GetDesignation())
	}
	return strings.Join(ps, ",")
}

func TestLangOrderSort(t *testing.T) {
	// 0:de 1:en 2:fr 3:de-CH 4:en-GB 5:it
	base := []string{"de", "en", "fr", "de-CH", "en-GB", "it"}
	cases := []struct {
		name   string
		header string
		langs  []string
		want   string // stored positions in the expected order
		zero   bool
	}{
		{name: "no header", header: "", langs: base, want: "0,1,2,3,4,5", zero: true},
		{name: "blank header", header: "  \t", langs: base, want: "0,1,2,3,4,5", zero: true},
		{name: "de", header: "de", langs: base, want: "0,3,1,2,4,5"},
		{name: "region matches the base language", header: "de-AT", langs: base, want: "0,3,1,2,4,5"},
		{name: "case-insensitive", header: "EN", langs: base, want: "1,4,0,2,3,5"},
		{name: "browser header", header: "en-US,en;q=0.9,de;q=0.8", langs: base, want: "1,4,0,3,2,5"},
		{name: "q wins over header order", header: "de;q=0.5,fr", langs: base, want: "2,0,3,1,4,5"},
		{name: "three languages", header: "it,fr;q=0.9,en;q=0.8", langs: base, want: "5,2,1,4,0,3"},
		{name: "wildcard alone keeps stored order", header: "*", langs: base, want: "0,1,2,3,4,5"},
		{name: "wildcard after a language", header: "fr, *;q=0.1", langs: base, want: "2,0,1,3,4,5"},
		{name: "q=0 is not preferred, but not dropped either", header: "de;q=0,en", langs: base, want: "1,4,0,2,3,5"},
		{name: "only q=0", header: "de;q=0", langs: base, want: "0,1,2,3,4,5", zero: true},
		{name: "language not stored", header: "es", langs: base, want: "0,1,2,3,4,5"},
		{name: "garbage is ignored", header: "garbage!!", langs: base, want: "0,1,2,3,4,5", zero: true},
		{name: "bad q is ignored", header: "de;q=abc", langs: base, want: "0,1,2,3,4,5", zero: true},
		{name: "unknown language is ignored", header: "zz", langs: base, want: "0,1,2,3,4,5", zero: true},
		{name: "private use is ignored", header: "x-klingon", langs: base, want: "0,1,2,3,4,5", zero: true},
		{name: "only commas", header: ",,,", langs: base, want: "0,1,2,3,4,5", zero: true},
		{name: "stored codes in other spellings", header: "de", langs: []string{"en", "DE", "de_DE", "de-Latn-CH"}, want: "1,2,3,0"},
		{name: "unparseable stored codes stay in place", header: "de", langs: []string{"", "zz", "de", "??", "en"}, want: "2,0,1,3,4"},
		// "und" is "undetermined", not English: golang.org/x/text guesses
		// English for its base with low confidence.
		{name: "undetermined stored code is not English", header: "en", langs: []string{"und", "de", "en"}, want: "2,0,1"},
		{name: "undetermined request prefers nothing", header: "und", langs: []string{"de", "en"}, want: "0,1", zero: true},
		{name: "many equal languages keep their order", header: "en", langs: []string{"de", "en", "de", "en", "de", "en"}, want: "1,3,5,0,2,4"},
		{name: "empty list", header: "de", langs: nil, want: ""},
		{name: "single designation", header: "de", langs: []string{"en"}, want: "0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := ParseAcceptLanguage(c.header)
			if o.IsZero() != c.zero {
				t.Errorf("ParseAcceptLanguage(%q).IsZero() = %v, want %v", c.header, o.IsZero(), c.zero)
			}
			ds := stored(c.langs...)
			before := slices.Clone(ds)
			got := o.Sort(ds)
			if p := positions(got); p != c.want {
				t.Errorf("Sort by %q of %q = %s, want %s", c.header, c.langs, p, c.want)
			}
			if !slices.Equal(ds, before) {
				t.Errorf("Sort changed its input: %s", positions(ds))
			}
		})
	}
}

// Long enough lists that an unstable sort would shuffle equal languages.
func TestLangOrderSortIsStableOnLongLists(t *testing.T) {
	langs := []string{"de", "en", "fr", "it", "es", "nl"}
	var codes []string
	for i := 0; i < 60; i++ {
		codes = append(codes, langs[(i*7)%len(langs)])
	}
	ds := stored(codes...)
	got := ParseAcceptLanguage("it,en;q=0.5").Sort(ds)
	var want []*mdrv1.Designation
	for _, l := range []string{"it", "en"} {
		for _, d := range ds {
			if d.GetLang() == l {
				want = append(want, d)
			}
		}
	}
	for _, d := range ds {
		if l := d.GetLang(); l != "it" && l != "en" {
			want = append(want, d)
		}
	}
	if positions(got) != positions(want) {
		t.Errorf("Sort = %s\nwant   %s", positions(got), positions(want))
	}
}

func TestLangOrderSortDoesNotShareTheResult(t *testing.T) {
	ds := stored("en", "de", "fr")
	got := ParseAcceptLanguage("de").Sort(ds)
	got[0], got[1], got[2] = nil, nil, nil
	if positions(ds) != "0,1,2" {
		t.Fatalf("writing to the sorted result changed the stored list: %s", positions(ds))
	}
}

func TestZeroLangOrderKeepsStoredOrder(t *testing.T) {
	var o LangOrder
	if !o.IsZero() {
		t.Fatal("zero LangOrder is not zero")
	}
	ds := stored("fr", "de", "en")
	if p := positions(o.Sort(ds)); p != "0,1,2" {
		t.Errorf("zero order sorted to %s", p)
	}
	if o.Sort(nil) != nil {
		t.Error("Sort(nil) is not nil")
	}
}

func FuzzParseAcceptLanguage(f *testing.F) {
	for _, seed := range [][2]string{
		{"de", "de,en"},
		{"en-US,en;q=0.9,de;q=0.8", "fr,de,en-GB,it,en"},
		{"*", "de,en"},
		{"*;q=0.5,de", "en,de"},
		{"de;q=0", "de,en"},
		{"garbage!!", "de"},
		{"x-foo, i-klingon", "tlh,x-foo"},
		{"de;q=abc,,en;q=2", "und,,zz,DE"},
		{"", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, header, langs string) {
		o := ParseAcceptLanguage(header)
		ds := stored(strings.Split(langs, ",")...)
		before := slices.Clone(ds)
		got := o.Sort(ds)
		if !slices.Equal(ds, before) {
			t.Fatalf("Sort changed its input")
		}
		if len(got) != len(ds) {
			t.Fatalf("Sort returned %d designations for %d", len(got), len(ds))
		}
		// A permutation: every stored designation exactly once.
		seen := map[*mdrv1.Designation]bool{}
		for _, d := range got {
			if d == nil || seen[d] || !slices.Contains(ds, d) {
				t.Fatalf("Sort by %q of %q = %s is not a permutation", header, langs, positions(got))
			}
			seen[d] = true
		}
		// Requested languages first, and equals keep their stored order.
		for i := 1; i < len(got); i++ {
			a, b := got[i-1], got[i]
			ra, rb := o.rank(a.GetLang()), o.rank(b.GetLang())
			if ra > rb || ra == rb && slices.Index(ds, a) > slices.Index(ds, b) {
				t.Fatalf("Sort by %q of %q = %s: %q (rank %d) before %q (rank %d)", header, langs, positions(got), a.GetLang(), ra, b.GetLang(), rb)
			}
		}
	})
}
