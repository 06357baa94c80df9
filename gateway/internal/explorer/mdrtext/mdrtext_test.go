package mdrtext

import (
	"testing"

	"fris.dev/gateway/internal/i18n"
	mdrv1 "fris.dev/proto/mdr/v1"
)

func TestPick(t *testing.T) {
	ds := []*mdrv1.Designation{{Lang: "fr", Designation: "âge"}, {Lang: "en-GB", Designation: "age", Definition: "years"}, {Lang: "de_DE", Designation: "Alter"}}
	for lang, want := range map[string]Label{
		"de": {Text: "Alter"},
		"en": {Text: "age", Definition: "years"},
		// Neither: English, marked as such for screen readers.
		"it": {Text: "age", Definition: "years", Lang: "en"},
	} {
		if got := Pick(ds, i18n.Lang(lang)); got != want {
			t.Errorf("%s: %+v, want %+v", lang, got, want)
		}
	}
	if got := Pick(ds[:1], "de"); got != (Label{Text: "âge", Lang: "fr"}) {
		t.Errorf("only French: %+v", got)
	}
	if got := Pick(nil, "de"); got != (Label{}) {
		t.Errorf("none: %+v", got)
	}
}
