package explorer

import "fris.dev/gateway/internal/i18n"

// siteRegistryMessages are the site registry view's texts
// (siteregistry.go), added to the catalogue at start.
var siteRegistryMessages = i18n.Catalogue{
	"op.siteregistry.title":        {i18n.English: "Site registry", i18n.German: "Standortverzeichnis"},
	"op.siteregistry.intro":        {i18n.English: "The sites of the network: banks are approved for a site of this list, upload credentials and inquiries name one, and researchers see their names. Sites are not deleted.", i18n.German: "Die Standorte des Netzwerks: Banken werden für einen Standort dieser Liste freigegeben, Upload-Zugänge und Anfragen nennen einen, und Forschende sehen ihre Namen. Standorte werden nicht gelöscht."},
	"op.siteregistry.list":         {i18n.English: "Sites", i18n.German: "Standorte"},
	"op.siteregistry.none":         {i18n.English: "The registry holds no site yet.", i18n.German: "Das Verzeichnis enthält noch keinen Standort."},
	"op.siteregistry.id":           {i18n.English: "Id", i18n.German: "ID"},
	"op.siteregistry.id.hint":      {i18n.English: "1–64 letters, digits, '.', '_' or '-'; banks, upload credentials and inquiries name the site by it, and it cannot be changed.", i18n.German: "1–64 Buchstaben, Ziffern, '.', '_' oder '-'; Banken, Upload-Zugänge und Anfragen nennen den Standort damit, und sie kann nicht geändert werden."},
	"op.siteregistry.namede":       {i18n.English: "Name (German)", i18n.German: "Name (Deutsch)"},
	"op.siteregistry.nameen":       {i18n.English: "Name (English)", i18n.German: "Name (Englisch)"},
	"op.siteregistry.names.hint":   {i18n.English: "At most 200 bytes each; one of them is required, and an empty one shows the other.", i18n.German: "Höchstens je 200 Bytes; einer ist erforderlich, und ein leerer zeigt den anderen."},
	"op.siteregistry.contact":      {i18n.English: "Contact", i18n.German: "Kontakt"},
	"op.siteregistry.logo":         {i18n.English: "Logo URL", i18n.German: "Logo-URL"},
	"op.siteregistry.logo.hint":    {i18n.English: "An absolute https URL, or empty.", i18n.German: "Eine absolute https-URL oder leer."},
	"op.siteregistry.bank":         {i18n.English: "Approved bank", i18n.German: "Freigegebene Bank"},
	"op.siteregistry.bank.yes":     {i18n.English: "yes", i18n.German: "ja"},
	"op.siteregistry.bank.no":      {i18n.English: "none", i18n.German: "keine"},
	"op.siteregistry.edit":         {i18n.English: "Change", i18n.German: "Ändern"},
	"op.siteregistry.edit.site":    {i18n.English: "Change %s", i18n.German: "%s ändern"},
	"op.siteregistry.edit.go":      {i18n.English: "Save the site", i18n.German: "Standort speichern"},
	"op.siteregistry.create":       {i18n.English: "Add a site", i18n.German: "Standort hinzufügen"},
	"op.siteregistry.create.go":    {i18n.English: "Add the site", i18n.German: "Standort hinzufügen"},
	"op.siteregistry.done.created": {i18n.English: "Site %s is added.", i18n.German: "Standort %s ist hinzugefügt."},
	"op.siteregistry.done.updated": {i18n.English: "Site %s is saved.", i18n.German: "Standort %s ist gespeichert."},
}

func init() {
	for k, v := range siteRegistryMessages {
		if _, dup := messages[k]; dup {
			panic("explorer: message " + k + " is in both catalogues")
		}
		messages[k] = v
	}
}
