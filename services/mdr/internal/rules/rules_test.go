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
