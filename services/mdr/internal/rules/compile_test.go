package rules

import (
	"strings"
	"testing"

	mdrv1 "fris.dev/proto/mdr/v1"
)

func TestCompileRejects(t *testing.T) {
	cases := []struct {
		name string
		v    *mdrv1.Validation
		want string // part of the error message
	}{
		{"unknown validation type", validation("COLOR", ""), "COLOR"},
		{"max quantity not a number", &mdrv1.Validation{MaximumCharacterQuantity: "abc"}, "abc"},
		{"max quantity negative", &mdrv1.Validation{MaximumCharacterQuantity: "-1"}, "-1"},
		{"max quantity decimal", &mdrv1.Validation{MaximumCharacterQuantity: "1.5"}, "1.5"},
		{"range empty", validation("INTEGERRANGE", ""), "range"},
		{"range just x", validation("INTEGERRANGE", "x"), "range"},
		{"range strict less", validation("INTEGERRANGE", "0<x<120"), "0<x<120"},
		{"range reversed bounds", validation("INTEGERRANGE", "120<=x<=0"), "120<=x<=0"},
		{"range letters", validation("INTEGERRANGE", "a<=x<=b"), "a<=x<=b"},
		{"range other variable", validation("INTEGERRANGE", "0<=y<=120"), "0<=y<=120"},
		{"range too many parts", validation("INTEGERRANGE", "0<=x<=120<=x"), "range"},
		{"range x twice", validation("INTEGERRANGE", "x<=5<=x"), "range"},
		{"range missing lower", validation("INTEGERRANGE", "<=x"), "range"},
		{"range missing upper", validation("INTEGERRANGE", "x<="), "range"},
		{"range missing both", validation("INTEGERRANGE", "<=x<="), "range"},
		{"range =<", validation("INTEGERRANGE", "0=<x"), "range"},
		{"range >=", validation("INTEGERRANGE", "x>=0"), "range"},
		{"range mixed", validation("INTEGERRANGE", "0<=x>=5"), "range"},
		{"range NaN", validation("FLOATRANGE", "NaN<=x"), "range"},
		{"range infinite", validation("FLOATRANGE", "x<=Inf"), "range"},
		{"range decimal comma", validation("FLOATRANGE", "1,5<=x<=2,5"), "range"},
		{"range reversed floats", validation("FLOATRANGE", "2.5<=x<=1.5"), "range"},
		{"date format unknown", validation("DATE", "YYYY-MM-DD"), "YYYY-MM-DD"},
		{"date format empty", validation("DATE", ""), "date format"},
		{"time format unknown", validation("TIME", "HOURS_25"), "HOURS_25"},
		{"time format given a date", validation("TIME", "DIN_5008"), "DIN_5008"},
		{"datetime without separator", validation("DATETIME", "DIN_5008_WITH_DAYS HOURS_24"), "datetime"},
		{"datetime bad date", validation("DATETIME", "FOO; HOURS_24"), "FOO"},
		{"datetime bad time", validation("DATETIME", "DIN_5008_WITH_DAYS; BAR"), "BAR"},
		{"datetime swapped", validation("DATETIME", "HOURS_24; DIN_5008_WITH_DAYS"), "HOURS_24"},
		{"regex unbalanced", validation("REGEX", "("), "regex"},
		{"regex bad class", validation("REGEX", "[a-"), "regex"},
		{"regex bad repetition", validation("REGEX", "*a"), "regex"},
		// Only valid once wrapped in the anchoring group; compiled as
		// `^(?:a)|(b)$` it would match any value starting with a.
		{"regex escaping the anchors", validation("REGEX", "a)|(b"), "regex"},
		{"regex escaping the anchors, non-capturing", validation("REGEX", "a)|(?:b"), "regex"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Compile(c.v)
			if err == nil {
				t.Fatalf("Compile(%v) = %v, nil; want an error", c.v, r)
			}
			if r != nil {
				t.Errorf("Compile returned a rule with the error %v", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

func TestParseRange(t *testing.T) {
	cases := []struct {
		in   string
		want Range
	}{
		{"0<=x<=120", Range{Min: 0, Max: 120, HasMin: true, HasMax: true}},
		{" 0 <= x <= 120 ", Range{Min: 0, Max: 120, HasMin: true, HasMax: true}},
		{"-1.5<=x<=2.25", Range{Min: -1.5, Max: 2.25, HasMin: true, HasMax: true}},
		{"3<=x<=3", Range{Min: 3, Max: 3, HasMin: true, HasMax: true}},
		{"x<=5", Range{Max: 5, HasMax: true}},
		{"x<=-5", Range{Max: -5, HasMax: true}},
		{"5<=x", Range{Min: 5, HasMin: true}},
		{"0.001<=x", Range{Min: 0.001, HasMin: true}},
		{"1e3<=x", Range{Min: 1000, HasMin: true}},
	}
	for _, c := range cases {
		got, err := ParseRange(c.in)
		if err != nil {
			t.Errorf("ParseRange(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("ParseRange(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"", "x", "5", "0<x<120", "120<=x<=0", "X<=5", "x<=5<=x", "x<=x", "<=x", "x<=", "x<=NaN", "-Inf<=x"} {
		if r, err := ParseRange(bad); err == nil {
			t.Errorf("ParseRange(%q) = %+v, want an error", bad, r)
		}
	}
}
