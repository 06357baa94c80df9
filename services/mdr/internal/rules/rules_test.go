package rules

import (
	"strings"
	"testing"

	mdrv1 "fris.dev/proto/mdr/v1"
)

func validation(vt, data string) *mdrv1.Validation {
	return &mdrv1.Validation{ValidationType: vt, ValidationData: data}
}

func enumerated(values ...string) *mdrv1.Validation {
	v := &mdrv1.Validation{ValueDomainType: "ENUMERATED", Datatype: "STRING", ValidationType: "NONE"}
	for _, s := range values {
		v.PermissibleValues = append(v.PermissibleValues, &mdrv1.PermissibleValue{Value: s})
	}
	return v
}

func mustCompile(t *testing.T, v *mdrv1.Validation) *Rule {
	t.Helper()
	r, err := Compile(v)
	if err != nil {
		t.Fatalf("Compile(%v): %v", v, err)
	}
	if r == nil {
		t.Fatalf("Compile(%v) returned a nil rule and no error", v)
	}
	return r
}

// checkCase is one validation with values it must accept and values it must
// reject.
type checkCase struct {
	name   string
	v      *mdrv1.Validation
	valid  []string
	reject []string
}

func runCheckCases(t *testing.T, cases []checkCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustCompile(t, c.v)
			for _, s := range c.valid {
				if err := r.Check(s); err != nil {
					t.Errorf("Check(%q) = %v, want valid", s, err)
				}
			}
			for _, s := range c.reject {
				if err := r.Check(s); err == nil {
					t.Errorf("Check(%q) = nil, want an error", s)
				}
			}
		})
	}
}

func TestCheckNumbers(t *testing.T) {
	runCheckCases(t, []checkCase{
		{
			name:   "INTEGER",
			v:      validation("INTEGER", ""),
			valid:  []string{"0", "-42", "+7", "007", " 12 ", "9223372036854775807", "-9223372036854775808"},
			reject: []string{"", " ", "1.0", "1.5", "1e3", "abc", "12a", "0x10", "9223372036854775808", "1 000"},
		},
		{
			name:   "FLOAT",
			v:      validation("FLOAT", ""),
			valid:  []string{"0", "3.14", "-0.5", ".5", "1e10", "-2.5E-3", " 1.5 ", "42"},
			reject: []string{"", "abc", "1,5", "NaN", "nan", "Inf", "+Inf", "-Infinity", "1e400", "1.2.3"},
		},
		{
			name:   "BOOLEAN",
			v:      validation("BOOLEAN", ""),
			valid:  []string{"true", "false", "TRUE", "False"},
			reject: []string{"", "yes", "no", "1", "0", "t", "wahr"},
		},
		{
			name:   "lower-case validation type",
			v:      validation("integer", ""),
			valid:  []string{"5"},
			reject: []string{"five"},
		},
		{
			name:   "INTEGERRANGE 0<=x<=120 (both bounds inclusive)",
			v:      validation("INTEGERRANGE", "0<=x<=120"),
			valid:  []string{"0", "120", "1", "60", "119", " 7 ", "+5", "007", "-0"},
			reject: []string{"-1", "121", "1000", "-120", "1.5", "60.0", "1e2", "abc", "", "99999999999999999999"},
		},
		{
			name:   "INTEGERRANGE with spaces in the range",
			v:      validation("INTEGERRANGE", "  0 <= x <= 120 "),
			valid:  []string{"0", "120"},
			reject: []string{"-1", "121"},
		},
		{
			name:   "INTEGERRANGE x<=5",
			v:      validation("INTEGERRANGE", "x<=5"),
			valid:  []string{"5", "4", "0", "-1000000"},
			reject: []string{"6", "100", "5.5", "x"},
		},
		{
			name:   "INTEGERRANGE 5<=x",
			v:      validation("INTEGERRANGE", "5<=x"),
			valid:  []string{"5", "6", "1000000"},
			reject: []string{"4", "0", "-5", "4.9"},
		},
		{
			name:   "INTEGERRANGE negative bounds",
			v:      validation("INTEGERRANGE", "-10<=x<=-5"),
			valid:  []string{"-10", "-5", "-7"},
			reject: []string{"-11", "-4", "0", "5"},
		},
		{
			name:   "INTEGERRANGE single value",
			v:      validation("INTEGERRANGE", "3<=x<=3"),
			valid:  []string{"3"},
			reject: []string{"2", "4"},
		},
		{
			name:   "FLOATRANGE with decimals",
			v:      validation("FLOATRANGE", "-1.5<=x<=2.25"),
			valid:  []string{"-1.5", "2.25", "0", "2.2499", "-1.4999", "1e0", "2", " 2.25 "},
			reject: []string{"2.2501", "-1.5001", "3", "-2", "NaN", "Inf", "-Inf", "abc", "1,5", ""},
		},
		{
			name:   "FLOATRANGE x<=0.5",
			v:      validation("FLOATRANGE", "x<=0.5"),
			valid:  []string{"0.5", "0.49999", "-1e9"},
			reject: []string{"0.50001", "1"},
		},
		{
			name:   "FLOATRANGE 36.5<=x",
			v:      validation("FLOATRANGE", "36.5<=x"),
			valid:  []string{"36.5", "36.50", "42", "1e3"},
			reject: []string{"36.49", "0", "-36.5"},
		},
	})
}

func TestCheckDates(t *testing.T) {
	runCheckCases(t, []checkCase{
		{
			name:   "DIN_5008 MM.yyyy",
			v:      validation("DATE", "DIN_5008"),
			valid:  []string{"12.2020", "01.1999", "02.2000", " 12.2020 "},
			reject: []string{"13.2020", "00.2020", "1.2020", "12.20", "2020-12", "24.12.2020", "12.2020x", "12/2020", ""},
		},
		{
			name: "DIN_5008_WITH_DAYS dd.MM.yyyy",
			v:    validation("DATE", "DIN_5008_WITH_DAYS"),
			valid: []string{
				"29.02.2020", // leap year
				"29.02.2000", // divisible by 400
				"31.12.1999", "01.01.2000", "30.04.2021", "31.01.2021",
			},
			reject: []string{
				"31.02.2020", "30.02.2020", "29.02.2019", "29.02.1900", // no such day
				"31.04.2021", "32.01.2020", "00.01.2020", "01.00.2020", "01.13.2020",
				"1.2.2020", // day and month must have two digits
				"01.02.20", // year must have four digits
				"2020-02-29", "02/29/2020", "29.02.2020 12:00", "", "heute",
			},
		},
		{
			name:   "DIN_5008_ONLY_YEAR",
			v:      validation("DATE", "DIN_5008_ONLY_YEAR"),
			valid:  []string{"2020", "1900", "0001"},
			reject: []string{"20", "202", "20201", "2020.", "year", ""},
		},
		{
			name:   "ISO_8601 yyyy-MM",
			v:      validation("DATE", "ISO_8601"),
			valid:  []string{"2020-02", "1999-12", "2000-01"},
			reject: []string{"2020-2", "2020-13", "2020-00", "02.2020", "2020-02-01", "2020/02", ""},
		},
		{
			name:   "ISO_8601_WITH_DAYS yyyy-MM-dd",
			v:      validation("DATE", "ISO_8601_WITH_DAYS"),
			valid:  []string{"2020-02-29", "1999-12-31", "2021-04-30"},
			reject: []string{"2019-02-29", "2020-02-30", "2020-04-31", "2020-4-01", "2020-04-1", "29.02.2020", "2020-02-29T00:00:00", ""},
		},
		{
			name:   "LOCAL_DATE is yyyy-MM-dd",
			v:      validation("DATE", "LOCAL_DATE"),
			valid:  []string{"2020-02-29"},
			reject: []string{"2019-02-29", "29.02.2020"},
		},
		{
			name:   "format names are case-insensitive and trimmed",
			v:      validation("DATE", " din_5008_with_days "),
			valid:  []string{"29.02.2020"},
			reject: []string{"31.02.2020"},
		},
	})
}

func TestCheckTimes(t *testing.T) {
	runCheckCases(t, []checkCase{
		{
			name:   "HOURS_24 HH:mm",
			v:      validation("TIME", "HOURS_24"),
			valid:  []string{"00:00", "23:59", "13:45", "09:05", " 13:45 "},
			reject: []string{"24:00", "12:60", "1345", "13:45:00", "01:45 PM", "13:5", "9:30", "-1:00", "13.45", ""},
		},
		{
			name:   "HOURS_24_WITH_SECONDS HH:mm:ss",
			v:      validation("TIME", "HOURS_24_WITH_SECONDS"),
			valid:  []string{"00:00:00", "23:59:59", "13:45:00"},
			reject: []string{"23:59", "23:59:60", "24:00:00", "13:45:00.123", "13:45:00,5", "1:45:00", ""},
		},
		{
			name:   "HOURS_12 hh:mm a",
			v:      validation("TIME", "HOURS_12"),
			valid:  []string{"12:00 AM", "12:00 PM", "01:30 PM", "11:59 pm", "09:15 am"},
			reject: []string{"13:00 PM", "00:30 AM", "01:30", "01:30PM", "1:30 PM", "01:30 XM", "13:30", "01:30:00 PM", ""},
		},
		{
			name:   "HOURS_12_WITH_SECONDS hh:mm:ss a",
			v:      validation("TIME", "HOURS_12_WITH_SECONDS"),
			valid:  []string{"11:59:59 PM", "12:00:00 am"},
			reject: []string{"11:59 PM", "11:59:60 PM", "11:59:59", "11:59:59.5 PM", ""},
		},
	})
}

func TestCheckDateTime(t *testing.T) {
	runCheckCases(t, []checkCase{
		{
			name: "DIN_5008_WITH_DAYS; HOURS_24_WITH_SECONDS",
			v:    validation("DATETIME", "DIN_5008_WITH_DAYS; HOURS_24_WITH_SECONDS"),
			valid: []string{
				"24.12.2019 13:45:00",
				"24.12.2019; 13:45:00", // separated as in the validation data
				"24.12.2019;13:45:00",
				" 29.02.2020 00:00:00 ",
			},
			reject: []string{
				"24.12.2019 13:45", "24.12.2019T13:45:00", "2019-12-24 13:45:00",
				"31.02.2019 13:45:00", "24.12.2019 25:00:00", "24.12.2019", "13:45:00",
				"13:45:00 24.12.2019", "", "24.12.2019 13:45:00 extra",
			},
		},
		{
			name:   "no space after the semicolon in the validation data",
			v:      validation("DATETIME", "ISO_8601_WITH_DAYS;HOURS_24"),
			valid:  []string{"2019-12-24 13:45"},
			reject: []string{"2019-12-24 13:45:00", "24.12.2019 13:45"},
		},
		{
			name:   "12-hour clock",
			v:      validation("DATETIME", "ISO_8601_WITH_DAYS; HOURS_12"),
			valid:  []string{"2019-12-24 01:45 PM", "2019-12-24 01:45 pm", "2019-12-24; 01:45 PM"},
			reject: []string{"2019-12-24 13:45", "2019-12-24 13:45 PM", "2019-12-24 01:45"},
		},
	})
}

func TestCheckRegex(t *testing.T) {
	runCheckCases(t, []checkCase{
		{
			name:   "full match, not substring",
			v:      validation("REGEX", "[a-z]+"),
			valid:  []string{"abc", "z"},
			reject: []string{"abc1", "1abc", "a b", "ABC", ""},
		},
		{
			name:   "alternation is anchored as a whole",
			v:      validation("REGEX", "abc|def"),
			valid:  []string{"abc", "def"},
			reject: []string{"abcdef", "xabc", "abcx", "xdef", "defx", "ab"},
		},
		{
			name:   "already anchored",
			v:      validation("REGEX", `^\d{5}$`),
			valid:  []string{"12345", "01067"},
			reject: []string{"1234", "123456", "1234a"},
		},
		{
			name:   "postcode",
			v:      validation("REGEX", `\d{5}`),
			valid:  []string{"12345"},
			reject: []string{"123456", " 12345", "12345\n"},
		},
		{
			name:   "case-insensitive flag in the pattern",
			v:      validation("REGEX", `(?i)ja|nein`),
			valid:  []string{"JA", "Nein"},
			reject: []string{"jein", "janein"},
		},
		{
			name:   "multi-line flag does not unanchor the pattern",
			v:      validation("REGEX", `(?m)[a-z]+`),
			valid:  []string{"abc"},
			reject: []string{"abc\ndef", "abc\n"},
		},
		{
			name:   "unicode",
			v:      validation("REGEX", `\p{L}+`),
			valid:  []string{"Größe", "Ärztin"},
			reject: []string{"Größe1"},
		},
	})
}

func TestCheckEnumerated(t *testing.T) {
	withDatatype := &mdrv1.Validation{Datatype: "enumerated", PermissibleValues: []*mdrv1.PermissibleValue{{Value: "ja"}, {Value: "nein"}}}
	lowerDomain := enumerated("a")
	lowerDomain.ValueDomainType = "enumerated"
	// The enumeration wins over validation type and data.
	overriding := enumerated("1", "2")
	overriding.ValidationType = "INTEGERRANGE"
	overriding.ValidationData = "5<=x"
	runCheckCases(t, []checkCase{
		{
			name:   "value domain ENUMERATED",
			v:      enumerated("m", "f", "d", "Größe"),
			valid:  []string{"m", "f", "d", "Größe"},
			reject: []string{"M", "x", "", "m ", " m", "md", "größe"},
		},
		{name: "datatype enumerated", v: withDatatype, valid: []string{"ja", "nein"}, reject: []string{"vielleicht", "Ja"}},
		{name: "lower-case value domain", v: lowerDomain, valid: []string{"a"}, reject: []string{"b"}},
		{name: "enumeration wins over validation type", v: overriding, valid: []string{"1", "2"}, reject: []string{"5", "6"}},
		{name: "no permissible values rejects everything", v: enumerated(), reject: []string{"", "a"}},
	})
}

func TestCheckByDatatype(t *testing.T) {
	dt := func(vt, datatype string) *mdrv1.Validation {
		return &mdrv1.Validation{ValidationType: vt, Datatype: datatype}
	}
	runCheckCases(t, []checkCase{
		{name: "NONE INTEGER", v: dt("NONE", "INTEGER"), valid: []string{"5", "-5"}, reject: []string{"5.5", "x"}},
		{name: "empty type FLOAT", v: dt("", "float"), valid: []string{"5.5"}, reject: []string{"x", "NaN"}},
		{name: "NONE BOOLEAN", v: dt("none", "BOOLEAN"), valid: []string{"true"}, reject: []string{"ja"}},
		{name: "NONE STRING accepts anything", v: dt("NONE", "STRING"), valid: []string{"", "x", "Größe", "31.02.2020"}},
		{name: "NONE DATE without format accepts anything", v: dt("NONE", "DATE"), valid: []string{"", "irgendwann"}},
		{name: "zero validation accepts anything", v: &mdrv1.Validation{}, valid: []string{"", "anything"}},
	})
}

func TestMaximumCharacterQuantity(t *testing.T) {
	maxLen := func(q string, base *mdrv1.Validation) *mdrv1.Validation {
		base.MaximumCharacterQuantity = q
		return base
	}
	runCheckCases(t, []checkCase{
		{
			name:   "counts runes, not bytes",
			v:      maxLen("5", validation("NONE", "")),
			valid:  []string{"", "a", "Ärzte", "ÄÖÜßä", "12345", "€€€€€"},
			reject: []string{"Ärztin", "123456", "ÄÖÜßäö"},
		},
		{
			name:   "trimmed",
			v:      maxLen(" 3 ", validation("NONE", "")),
			valid:  []string{"abc"},
			reject: []string{"abcd"},
		},
		{
			name:   "combined with a regex: both apply",
			v:      maxLen("4", validation("REGEX", "[a-z]+")),
			valid:  []string{"abcd"},
			reject: []string{"abcde", "ab1"},
		},
		{
			name:   "combined with an enumeration",
			v:      maxLen("2", enumerated("ab", "abc")),
			valid:  []string{"ab"},
			reject: []string{"abc"},
		},
		{
			name:  "0 means no limit",
			v:     maxLen("0", validation("NONE", "")),
			valid: []string{"", strings.Repeat("x", 10000)},
		},
	})
}

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

func TestCheckErrorNamesTheValue(t *testing.T) {
	cases := []struct {
		v     *mdrv1.Validation
		value string
	}{
		{validation("INTEGERRANGE", "0<=x<=120"), "121"},
		{validation("INTEGER", ""), "zwölf"},
		{validation("DATE", "DIN_5008_WITH_DAYS"), "31.02.2020"},
		{validation("TIME", "HOURS_24"), "25:00"},
		{validation("REGEX", "[a-z]+"), "ABC"},
		{enumerated("m", "f"), "x"},
	}
	for _, c := range cases {
		err := mustCompile(t, c.v).Check(c.value)
		if err == nil {
			t.Errorf("%v: Check(%q) = nil, want an error", c.v, c.value)
			continue
		}
		if !strings.Contains(err.Error(), c.value) {
			t.Errorf("%v: error %q does not name the value %q", c.v, err, c.value)
		}
	}
}

// Rules are shared between requests: checking concurrently must be safe.
func TestRuleConcurrentUse(t *testing.T) {
	r := mustCompile(t, validation("DATETIME", "DIN_5008_WITH_DAYS; HOURS_24_WITH_SECONDS"))
	done := make(chan error)
	for i := 0; i < 8; i++ {
		go func() {
			var err error
			for j := 0; j < 100 && err == nil; j++ {
				err = r.Check("24.12.2019 13:45:00")
			}
			done <- err
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
