package explorer

import "fris.dev/gateway/internal/i18n"

// suppressedMessages are the texts for counts the broker's small-count
// rule hid (results_suppressed.go); they join messages when the package
// loads.
var suppressedMessages = i18n.Catalogue{
	"res.below":             {i18n.English: "< %d", i18n.German: "< %d"},
	"res.count.plusbelow":   {i18n.English: "%d + < %d", i18n.German: "%d + < %d"},
	"res.count.partialtext": {i18n.English: "%s (%d unreadable)", i18n.German: "%s (%d nicht lesbar)"},
	"res.total.below.one":   {i18n.English: "%s, and 1 site with fewer than %d", i18n.German: "%s, dazu 1 Standort mit weniger als %d"},
	"res.total.below":       {i18n.English: "%s, and %d sites with fewer than %d", i18n.German: "%s, dazu %d Standorte mit weniger als %d"},
	"res.below.hint":        {i18n.English: "Counts below %d are shown as \"< %d\" to protect patients; the total is the sum of the counts shown.", i18n.German: "Anzahlen unter %d werden zum Schutz der Patienten als „< %d“ gezeigt; die Summe ist die der gezeigten Anzahlen."},
	"res.unread.withheld":   {i18n.English: "(not shown: it may hold a count below the threshold)", i18n.German: "(nicht gezeigt: sie kann eine Anzahl unter der Schwelle enthalten)"},
}

func init() {
	for k, v := range suppressedMessages {
		if _, dup := messages[k]; !dup {
			messages[k] = v
		}
	}
}
