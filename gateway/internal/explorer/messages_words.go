package explorer

import "fris.dev/gateway/internal/i18n"

// wordsMessages are the texts around queries in words and the builder's
// negations and emptiness; they join messages when the package loads.
var wordsMessages = i18n.Catalogue{
	"qw.label":      {i18n.English: "The query in words", i18n.German: "Die Abfrage in Worten"},
	"qw.title":      {i18n.English: "The query in words", i18n.German: "Die Abfrage in Worten"},
	"qw.hint":       {i18n.English: "As of the page's last load or check; \u00d7 removes a condition.", i18n.German: "Stand beim letzten Laden oder Prüfen; \u00d7 entfernt eine Bedingung."},
	"qw.empty":      {i18n.English: "No condition: the query counts every donor.", i18n.German: "Keine Bedingung: Die Abfrage zählt alle Spenderinnen und Spender."},
	"qw.column":     {i18n.English: "Query", i18n.German: "Abfrage"},
	"qb.op.notin":   {i18n.English: "is none of", i18n.German: "ist keiner von"},
	"qb.op.none":    {i18n.English: "has no value", i18n.German: "hat keinen Wert"},
	"qb.op.range":   {i18n.English: "lies in the range", i18n.German: "liegt im Bereich"},
	"qb.pick.op":    {i18n.English: "Condition", i18n.German: "Bedingung"},
	"qb.pick.in":    {i18n.English: "is one of the values chosen", i18n.German: "ist einer der gewählten Werte"},
	"qb.pick.notin": {i18n.English: "is none of the values chosen", i18n.German: "ist keiner der gewählten Werte"},
	"qb.err.nopick": {i18n.English: "Choose the values it must not have, or another condition.", i18n.German: "Wählen Sie die Werte, die es nicht haben darf, oder eine andere Bedingung."},
}

func init() {
	for k, v := range wordsMessages {
		if _, dup := messages[k]; !dup {
			messages[k] = v
		}
	}
}
