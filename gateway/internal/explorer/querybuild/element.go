package querybuild

import (
	"regexp"
	"strings"
	"time"

	"fris.dev/gateway/internal/explorer/mdrtext"
	"fris.dev/gateway/internal/i18n"
	mdrv1 "fris.dev/proto/mdr/v1"
)

// Element is what the builder needs of a data element.
type Element struct {
	URN       string
	Label     mdrtext.Label
	Kind      string
	Datatype  string
	Unit      string
	Options   []mdrtext.Value
	Min, Max  string // a number's range, as the registry gives it
	Step      string // "1" for integers, "any" for others
	DateFmt   string // a date's format in the registry (Go layout)
	InputType string // the HTML input of a range: number, date or text
	Format    string // the registry's format name, shown as a hint
}

var rangeRE = regexp.MustCompile(`^\s*(-?[0-9.]+)\s*<=\s*x\s*<=\s*(-?[0-9.]+)\s*$`)

// Go layouts of the registry's date formats (services/mdr's rules).
var dateLayouts = map[string]string{
	"DIN_5008":           "01.2006",
	"DIN_5008_WITH_DAYS": "02.01.2006",
	"DIN_5008_ONLY_YEAR": "2006",
	"ISO_8601":           "2006-01",
	"ISO_8601_WITH_DAYS": "2006-01-02",
	"LOCAL_DATE":         "2006-01-02",
}

// ElementOf describes a data element for the builder.
func ElementOf(urn string, de *mdrv1.DataElement, l i18n.Lang) *Element {
	v := de.GetValidation()
	e := &Element{URN: urn, Label: mdrtext.Pick(de.GetDesignations(), l), Datatype: v.GetDatatype(), Unit: v.GetUnitOfMeasure()}
	if e.Label.Text == "" {
		e.Label.Text = urn
	}
	dt := strings.ToUpper(v.GetDatatype())
	switch {
	case strings.EqualFold(v.GetValueDomainType(), "ENUMERATED") || dt == "ENUMERATED":
		if len(v.GetPermissibleValues()) == 0 {
			// An enumeration without values (a catalogue kept elsewhere)
			// takes text conditions.
			e.Kind = KindText
			break
		}
		e.Kind = KindEnum
		for _, pv := range v.GetPermissibleValues() {
			e.Options = append(e.Options, mdrtext.Value{Value: pv.GetValue(), Meaning: mdrtext.Pick(pv.GetMeanings(), l)})
		}
	case dt == "INTEGER" || dt == "FLOAT":
		e.Kind, e.InputType, e.Step = KindNumber, "number", "any"
		if dt == "INTEGER" {
			e.Step = "1"
		}
		if m := rangeRE.FindStringSubmatch(v.GetValidationData()); m != nil {
			e.Min, e.Max = m[1], m[2]
		}
	case dt == "DATE":
		e.Kind, e.InputType = KindDate, "text"
		e.Format = strings.ToUpper(strings.TrimSpace(v.GetValidationData()))
		if lay, ok := dateLayouts[e.Format]; ok {
			e.DateFmt = lay
			if strings.Contains(lay, "02") {
				e.InputType = "date" // the browser's date picker, yyyy-mm-dd
			}
		}
	default:
		e.Kind = KindText
	}
	return e
}

// registryDate turns a date as the form holds it into the registry's
// format: a date input sends yyyy-mm-dd.
func (e *Element) registryDate(s string) string {
	if e.InputType != "date" || e.DateFmt == "" {
		return s
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return s
	}
	return t.Format(e.DateFmt)
}

// formDate is the inverse of registryDate.
func (e *Element) formDate(s string) string {
	if e.InputType != "date" || e.DateFmt == "" {
		return s
	}
	t, err := time.Parse(e.DateFmt, s)
	if err != nil {
		return s
	}
	return t.Format("2006-01-02")
}

// node is a condition as the Samply query language says it. ok is false
