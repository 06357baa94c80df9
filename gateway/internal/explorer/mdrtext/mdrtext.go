// Package mdrtext picks the registry's texts (designations, definitions,
// the meanings of permissible values) in a page's language.
package mdrtext

import (
	"strings"

	"fris.dev/gateway/internal/i18n"
	mdrv1 "fris.dev/proto/mdr/v1"
)

// Label is a designation in the page's language.
type Label struct {
	Text, Definition string
	// Lang is set when the text is in another language than the page's,
	// so screen readers pronounce it right.
	Lang string
}

// Pick chooses the designation in l, else English, else the first.
func Pick(ds []*mdrv1.Designation, l i18n.Lang) Label {
	var best *mdrv1.Designation
	for _, want := range []string{string(l), string(i18n.English)} {
		for _, d := range ds {
			if strings.EqualFold(Primary(d.GetLang()), want) {
				best = d
				break
			}
		}
		if best != nil {
			break
		}
	}
	if best == nil && len(ds) > 0 {
		best = ds[0]
	}
	if best == nil {
		return Label{}
	}
	out := Label{Text: best.GetDesignation(), Definition: best.GetDefinition()}
	if p := Primary(best.GetLang()); p != "" && !strings.EqualFold(p, string(l)) {
		out.Lang = p
	}
	return out
}

// Primary is a language tag's primary subtag ("de" of "de-DE").
func Primary(tag string) string {
	p, _, _ := strings.Cut(tag, "-")
	p, _, _ = strings.Cut(p, "_")
	return strings.ToLower(p)
}

// Value is a permissible value and its meaning.
type Value struct {
	Value   string
	Meaning Label
}
