package explorer

import "fris.dev/gateway/internal/i18n"

// secondaryMessages are the texts for strata the broker hid: a
// stratification with a stratum below k, or whose strata leave 1 to k-1
// of their entity unlisted, is hidden whole at that site (secondary
// suppression), so a hidden stratum is "hidden", not "< k".
var secondaryMessages = i18n.Catalogue{
	"res.stratum.hidden":           {i18n.English: "hidden", i18n.German: "verborgen"},
	"res.stratum.plushidden":       {i18n.English: "%d + hidden", i18n.German: "%d + verborgen"},
	"res.stratum.total.hidden.one": {i18n.English: "%s, and hidden at 1 site", i18n.German: "%s, dazu verborgen an 1 Standort"},
	"res.stratum.total.hidden":     {i18n.English: "%s, and hidden at %d sites", i18n.German: "%s, dazu verborgen an %d Standorten"},
	"res.strata.hint": {i18n.English: "Where a stratum has fewer than %d, or the strata a site lists leave fewer than that unlisted, all strata of its breakdown at that site are hidden, so none can be worked out from the others.",
		i18n.German: "Hat eine Ausprägung weniger als %d oder lassen die Ausprägungen eines Standorts weniger als so viele ungenannt, sind alle Ausprägungen dieser Aufschlüsselung an dem Standort verborgen, damit keine aus den anderen errechnet werden kann."},
}

func init() {
	for k, v := range secondaryMessages {
		if _, dup := messages[k]; !dup {
			messages[k] = v
		}
	}
}
