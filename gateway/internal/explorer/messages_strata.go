package explorer

import "fris.dev/gateway/internal/i18n"

// strataMessages are the texts of the stratified results
// (results_strata.go); they join messages when the package loads.
var strataMessages = i18n.Catalogue{
	"res.donors":         {i18n.English: "Donors", i18n.German: "Spender"},
	"res.strata":         {i18n.English: "Stratified results", i18n.German: "Aufgeschlüsselte Ergebnisse"},
	"res.strata.donor":   {i18n.English: "Donors by %s", i18n.German: "Spender nach %s"},
	"res.strata.sample":  {i18n.English: "Samples by %s", i18n.German: "Proben nach %s"},
	"res.strata.stratum": {i18n.English: "Stratum", i18n.German: "Ausprägung"},
	"res.strata.alt":     {i18n.English: "%s, as a bar chart; the table beside it has the same numbers: %s.", i18n.German: "%s als Balkendiagramm; die Tabelle daneben enthält dieselben Zahlen: %s."},
}

func init() {
	for k, v := range strataMessages {
		if _, dup := messages[k]; !dup {
			messages[k] = v
		}
	}
}
