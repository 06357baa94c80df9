package explorer

import "fris.dev/gateway/internal/i18n"

// auditMessages are the audit and settings views' texts, added to the
// catalogue at start like the other operator views' (a key in both is a
// mistake, refused).
var auditMessages = i18n.Catalogue{
	"op.audit.title":           {i18n.English: "Audit", i18n.German: "Audit"},
	"op.audit.intro":           {i18n.English: "What was done in the services, by whom, and how it ended: the events each service keeps (%s), newest first. The services' audit logs hold them all.", i18n.German: "Was in den Diensten getan wurde, von wem, und wie es ausging: die Ereignisse, die jeder Dienst aufbewahrt (%s), neueste zuerst. Die Audit-Logs der Dienste enthalten alle."},
	"op.audit.filters":         {i18n.English: "Filter events", i18n.German: "Ereignisse filtern"},
	"op.audit.service":         {i18n.English: "Service", i18n.German: "Dienst"},
	"op.audit.all":             {i18n.English: "all", i18n.German: "alle"},
	"op.audit.actor":           {i18n.English: "Actor (user id, email or admin-api)", i18n.German: "Akteur (Benutzer-ID, E-Mail oder admin-api)"},
	"op.audit.action":          {i18n.English: "Action begins with", i18n.German: "Aktion beginnt mit"},
	"op.audit.outcome":         {i18n.English: "Outcome", i18n.German: "Ergebnis"},
	"op.audit.class":           {i18n.English: "Who acted", i18n.German: "Wer handelte"},
	"op.audit.class.admin":     {i18n.English: "administrator", i18n.German: "Administration"},
	"op.audit.class.signed-in": {i18n.English: "signed in", i18n.German: "angemeldet"},
	"op.audit.class.anonymous": {i18n.English: "anonymous", i18n.German: "anonym"},
	"op.audit.count":           {i18n.English: "%d attempts from this address in this minute (the audit log has each)", i18n.German: "%d Versuche von dieser Adresse in dieser Minute (das Audit-Log enthält jeden)"},
	"op.audit.from":            {i18n.English: "From (UTC)", i18n.German: "Von (UTC)"},
	"op.audit.to":              {i18n.English: "To (UTC)", i18n.German: "Bis (UTC)"},
	"op.audit.col.action":      {i18n.English: "Action", i18n.German: "Aktion"},
	"op.audit.col.actor":       {i18n.English: "Actor", i18n.German: "Akteur"},
	"op.audit.go":              {i18n.English: "Show", i18n.German: "Anzeigen"},
	"op.audit.reset":           {i18n.English: "All events", i18n.German: "Alle Ereignisse"},
	"op.audit.events":          {i18n.English: "Events", i18n.German: "Ereignisse"},
	"op.audit.none":            {i18n.English: "No event matches.", i18n.German: "Kein Ereignis passt."},
	"op.audit.time":            {i18n.English: "Time", i18n.German: "Zeit"},
	"op.audit.target":          {i18n.English: "Target", i18n.German: "Ziel"},
	"op.audit.details":         {i18n.English: "Details", i18n.German: "Details"},
	"op.audit.client":          {i18n.English: "client", i18n.German: "Client"},
	"op.audit.addr":            {i18n.English: "from", i18n.German: "von"},
	"op.audit.request":         {i18n.English: "request", i18n.German: "Anfrage"},
	"op.audit.outcome.ok":      {i18n.English: "ok", i18n.German: "ok"},
	"op.audit.outcome.denied":  {i18n.English: "denied", i18n.German: "abgewiesen"},
	"op.audit.outcome.failed":  {i18n.English: "failed", i18n.German: "fehlgeschlagen"},
	"op.audit.pages":           {i18n.English: "Pages", i18n.German: "Seiten"},
	"op.audit.first":           {i18n.English: "Newest events", i18n.German: "Neueste Ereignisse"},
	"op.audit.next":            {i18n.English: "Older events", i18n.German: "Ältere Ereignisse"},
	"op.audit.failed":          {i18n.English: "Not every service answered; their events are missing here:", i18n.German: "Nicht jeder Dienst hat geantwortet; seine Ereignisse fehlen hier:"},
	"op.audit.invalid":         {i18n.English: "The filter is malformed: a known service, an actor of at most 254 and an action of at most 128 characters, an outcome of the list, times as the fields take them.", i18n.German: "Der Filter ist fehlerhaft: ein bekannter Dienst, ein Akteur mit höchstens 254 und eine Aktion mit höchstens 128 Zeichen, ein Ergebnis der Liste, Zeiten wie die Felder sie nehmen."},
	"op.audit.error.none":      {i18n.English: "This gateway reaches no service's audit events.", i18n.German: "Dieses Gateway erreicht die Audit-Ereignisse keines Dienstes."},

	"op.settings.title":  {i18n.English: "Settings", i18n.German: "Einstellungen"},
	"op.settings.intro":  {i18n.English: "What the gateway and the services run with that an operator needs to know: token lifetimes, registration, abuse limits, sizes, audit retention. Read-only: they are the services' flags (README, Configuration); secrets are never shown.", i18n.German: "Womit Gateway und Dienste laufen, soweit ein Betreiber es wissen muss: Gültigkeitsdauern von Tokens, Registrierung, Missbrauchsgrenzen, Größen, Aufbewahrung der Audit-Ereignisse. Nur lesend: Es sind die Flags der Dienste (README, Configuration); Geheimnisse werden nie gezeigt."},
	"op.settings.name":   {i18n.English: "Setting", i18n.German: "Einstellung"},
	"op.settings.value":  {i18n.English: "Value", i18n.German: "Wert"},
	"op.settings.desc":   {i18n.English: "Meaning (from the flag's help)", i18n.German: "Bedeutung (aus der Hilfe des Flags)"},
	"op.settings.failed": {i18n.English: "The service did not answer: %s", i18n.German: "Der Dienst hat nicht geantwortet: %s"},
	"op.settings.none":   {i18n.English: "No settings.", i18n.German: "Keine Einstellungen."},
	"op.settings.empty":  {i18n.English: "(empty)", i18n.German: "(leer)"},
}

func init() {
	for k, v := range auditMessages {
		if _, dup := messages[k]; dup {
			panic("explorer: message " + k + " is in both catalogues")
		}
		messages[k] = v
	}
}
