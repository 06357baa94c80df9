// Package rules checks values against a data element's validation: ranges,
// date and time formats, enumerations, regular expressions and lengths. It is
// the one implementation of these rules; the upload service reaches it
// through the registry's CheckValues RPC.
package rules

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	mdrv1 "fris.dev/proto/mdr/v1"
)

// Rule is a compiled validation.
type Rule struct {
	check  func(string) error
	maxLen int
}

// Compile turns a validation into a Rule. It fails on validation data that
// cannot be checked (a bad range, an unknown date format, a bad regex), which
// the registry reports at import time.
func Compile(v *mdrv1.Validation) (*Rule, error) {
	r := &Rule{}
	if q := strings.TrimSpace(v.GetMaximumCharacterQuantity()); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("maximum_character_quantity %q is not a number", q)
		}
		r.maxLen = n
	}
	if strings.EqualFold(v.GetValueDomainType(), "ENUMERATED") || strings.EqualFold(v.GetDatatype(), "enumerated") {
		allowed := make(map[string]bool, len(v.GetPermissibleValues()))
		names := make([]string, 0, len(v.GetPermissibleValues()))
		for _, pv := range v.GetPermissibleValues() {
			allowed[pv.GetValue()] = true
			names = append(names, pv.GetValue())
		}
		r.check = func(s string) error {
			if !allowed[s] {
				return fmt.Errorf("%q is not a permissible value (%s)", s, strings.Join(names, ", "))
			}
			return nil
		}
		return r, nil
	}
	data := strings.TrimSpace(v.GetValidationData())
	var err error
	switch strings.ToUpper(v.GetValidationType()) {
	case "", "NONE":
		r.check, err = byDatatype(v.GetDatatype())
	case "BOOLEAN":
		r.check = checkBool
	case "INTEGER":
		r.check = checkInt
	case "FLOAT":
		r.check = checkFloat
	case "INTEGERRANGE":
		r.check, err = rangeCheck(data, true)
	case "FLOATRANGE":
		r.check, err = rangeCheck(data, false)
	case "DATE":
		r.check, err = dateCheck(data)
	case "TIME":
		r.check, err = timeCheck(data)
	case "DATETIME":
		r.check, err = dateTimeCheck(data)
	case "REGEX":
		r.check, err = regexCheck(data)
	default:
		return nil, fmt.Errorf("unknown validation_type %q", v.GetValidationType())
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Check returns nil when s is valid, else the reason.
func (r *Rule) Check(s string) error {
	if r.maxLen > 0 && utf8.RuneCountInString(s) > r.maxLen {
		return fmt.Errorf("longer than %d characters", r.maxLen)
	}
	if r.check == nil {
		return nil
	}
	return r.check(s)
}

func byDatatype(dt string) (func(string) error, error) {
	switch strings.ToUpper(dt) {
	case "INTEGER":
		return checkInt, nil
	case "FLOAT":
		return checkFloat, nil
	case "BOOLEAN":
		return checkBool, nil
	}
	// STRING, CATALOG and free DATE/TIME texts without a format are not checked.
	return nil, nil
}

func checkBool(s string) error {
	switch strings.ToLower(s) {
	case "true", "false":
		return nil
	}
	return fmt.Errorf("%q is not true or false", s)
}

func checkInt(s string) error {
	if _, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err != nil {
		return fmt.Errorf("%q is not an integer", s)
	}
	return nil
}

func parseFloat(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return f, nil
}

func checkFloat(s string) error {
	_, err := parseFloat(s)
	return err
}

// Range is `a<=x<=b`, `x<=b` or `a<=x`.
type Range struct {
	Min, Max       float64
	HasMin, HasMax bool
}

// ParseRange parses the registry's range syntax.
func ParseRange(s string) (Range, error) {
	var r Range
	parts := strings.Split(strings.ReplaceAll(s, " ", ""), "<=")
	bad := fmt.Errorf("range %q is not a<=x<=b, x<=b or a<=x", s)
	num := func(p string) (float64, error) {
		f, err := parseFloat(p)
		if err != nil {
			return 0, bad
		}
		return f, nil
	}
	var err error
	switch {
	case len(parts) == 3 && parts[1] == "x":
		if r.Min, err = num(parts[0]); err != nil {
			return r, err
		}
		if r.Max, err = num(parts[2]); err != nil {
			return r, err
		}
		r.HasMin, r.HasMax = true, true
		if r.Min > r.Max {
			return r, bad
		}
	case len(parts) == 2 && parts[0] == "x":
		if r.Max, err = num(parts[1]); err != nil {
			return r, err
		}
		r.HasMax = true
	case len(parts) == 2 && parts[1] == "x":
		if r.Min, err = num(parts[0]); err != nil {
			return r, err
		}
		r.HasMin = true
	default:
		return r, bad
	}
	return r, nil
}

func rangeCheck(data string, integer bool) (func(string) error, error) {
	r, err := ParseRange(data)
	if err != nil {
		return nil, err
	}
	return func(s string) error {
		var f float64
		if integer {
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				return fmt.Errorf("%q is not an integer", s)
			}
			f = float64(n)
		} else {
			var err error
			if f, err = parseFloat(s); err != nil {
				return err
			}
		}
		if (r.HasMin && f < r.Min) || (r.HasMax && f > r.Max) {
			return fmt.Errorf("%s is outside %s", strings.TrimSpace(s), data)
		}
		return nil
	}, nil
}

// Go layouts of the registry's date and time formats.
var (
	dateLayouts = map[string]string{
		"DIN_5008":           "01.2006",
		"DIN_5008_WITH_DAYS": "02.01.2006",
		"DIN_5008_ONLY_YEAR": "2006",
		"ISO_8601":           "2006-01",
		"ISO_8601_WITH_DAYS": "2006-01-02",
		"LOCAL_DATE":         "2006-01-02",
	}
	timeLayouts = map[string]string{
		"HOURS_24":              "15:04",
		"HOURS_24_WITH_SECONDS": "15:04:05",
		"HOURS_12":              "03:04 PM",
		"HOURS_12_WITH_SECONDS": "03:04:05 PM",
	}
)

func layout(table map[string]string, name, what string) (string, error) {
	l, ok := table[strings.ToUpper(strings.TrimSpace(name))]
	if !ok {
		return "", fmt.Errorf("unknown %s format %q", what, name)
	}
	return l, nil
}

func parseAs(l, s, what, name string) error {
	v := strings.TrimSpace(s)
	// time.Parse is more lenient than the registry's formats: it takes a
	// one-digit hour for "15" (9:30 as HH:mm), hour 00 on the 12-hour clock
	// and fractional seconds the layout does not have. A value is in the
	// format only when it reads exactly as the format writes it.
	if t, err := time.Parse(l, v); err != nil || t.Format(l) != v {
		return fmt.Errorf("%q is not a %s in format %s", s, what, name)
	}
	return nil
}

func dateCheck(data string) (func(string) error, error) {
	l, err := layout(dateLayouts, data, "date")
	if err != nil {
		return nil, err
	}
	return func(s string) error { return parseAs(l, s, "date", data) }, nil
}

func timeCheck(data string) (func(string) error, error) {
	l, err := layout(timeLayouts, data, "time")
	if err != nil {
		return nil, err
	}
	return func(s string) error { return parseAs(l, strings.ToUpper(s), "time", data) }, nil
}

// dateTimeCheck reads validation data "<date format>; <time format>"; values
// are the date and the time separated by a space (or by "; ", as written in
// the validation data).
func dateTimeCheck(data string) (func(string) error, error) {
	df, tf, ok := strings.Cut(data, ";")
	if !ok {
		return nil, fmt.Errorf("datetime format %q is not <date format>; <time format>", data)
	}
	dl, err := layout(dateLayouts, df, "date")
	if err != nil {
		return nil, err
	}
	tl, err := layout(timeLayouts, tf, "time")
	if err != nil {
		return nil, err
	}
	return func(s string) error {
		s = strings.TrimSpace(s)
		d, t, ok := strings.Cut(s, ";")
		if !ok {
			d, t, ok = strings.Cut(s, " ")
		}
		if !ok {
			return fmt.Errorf("%q is not a date and time in format %s", s, data)
		}
		if err := parseAs(dl, d, "date", df); err != nil {
			return err
		}
		return parseAs(tl, strings.ToUpper(t), "time", strings.TrimSpace(tf))
	}, nil
}

func regexCheck(data string) (func(string) error, error) {
	// Compile the pattern on its own first: one like `a)|(b` is invalid, but
	// inside the anchoring group it would compile to `^(?:a)|(b)$`, which
	// matches any value that merely starts with a.
	if _, err := regexp.Compile(data); err != nil {
		return nil, fmt.Errorf("regex %q: %v", data, err)
	}
	re, err := regexp.Compile(`^(?:` + data + `)$`)
	if err != nil {
		return nil, fmt.Errorf("regex %q: %v", data, err)
	}
	return func(s string) error {
		if !re.MatchString(s) {
			return fmt.Errorf("%q does not match %s", s, data)
		}
		return nil
	}, nil
}
