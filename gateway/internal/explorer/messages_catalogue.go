package explorer

import "fris.dev/gateway/internal/i18n"

// catalogueMessages are the criteria catalogue's texts; they join
// messages when the package loads.
var catalogueMessages = i18n.Catalogue{
	"cat.title":    {i18n.English: "Criteria catalogue", i18n.German: "Kriterienkatalog"},
	"cat.hint":     {i18n.English: "Open a group, choose values or a range, and add the condition to the last group of the query.", i18n.German: "Öffnen Sie eine Gruppe, wählen Sie Werte oder einen Bereich und fügen Sie die Bedingung der letzten Gruppe der Abfrage hinzu."},
	"cat.empty":    {i18n.English: "This namespace has no data elements you may see.", i18n.German: "Dieser Namensraum hat keine Datenelemente, die Sie sehen dürfen."},
	"cat.capped":   {i18n.English: "The catalogue shows the first 300 data elements; find others with the search.", i18n.German: "Der Katalog zeigt die ersten 300 Datenelemente; andere finden Sie mit der Suche."},
	"cat.add":      {i18n.English: "Add to the query", i18n.German: "Zur Abfrage hinzufügen"},
	"cat.values":   {i18n.English: "Values of %s", i18n.German: "Werte von %s"},
	"cat.range":    {i18n.English: "Range of %s", i18n.German: "Bereich von %s"},
	"cat.text":     {i18n.English: "Value of %s", i18n.German: "Wert von %s"},
	"cat.err.full": {i18n.English: "The query has as many conditions as it may have (50).", i18n.German: "Die Abfrage hat so viele Bedingungen, wie sie haben darf (50)."},
}

func init() {
	for k, v := range catalogueMessages {
		if _, dup := messages[k]; !dup {
			messages[k] = v
		}
	}
}
