package explorer

import "fris.dev/gateway/internal/i18n"

// operatorMessages are the operator views' texts, kept apart from the
// catalogue of the other pages and added to it at start (a key in both is
// a mistake, refused there).
var operatorMessages = i18n.Catalogue{
	"nav.operator":   {i18n.English: "Operations", i18n.German: "Betrieb"},
	"op.title":       {i18n.English: "Operations", i18n.German: "Betrieb"},
	"op.nav":         {i18n.English: "Operator views", i18n.German: "Betriebsansichten"},
	"op.never":       {i18n.English: "never", i18n.German: "nie"},
	"op.ago.now":     {i18n.English: "just now", i18n.German: "gerade eben"},
	"op.ago.minutes": {i18n.English: "%d min ago", i18n.German: "vor %d Min."},
	"op.ago.hours":   {i18n.English: "%d h ago", i18n.German: "vor %d Std."},
	"op.ago.days":    {i18n.English: "%d days ago", i18n.German: "vor %d Tagen"},
	"op.dur.days":    {i18n.English: "%d days", i18n.German: "%d Tage"},
	"op.dur.hours":   {i18n.English: "%d hours", i18n.German: "%d Stunden"},

	"op.error.signin":   {i18n.English: "The operator views need signing in with an operator's account.", i18n.German: "Die Betriebsansichten erfordern die Anmeldung mit einem Betreiberkonto."},
	"op.error.scope":    {i18n.English: "The operator views are for operators: your account lacks the operator role (scope %s). An operator can grant it with the auth service's set-scopes command.", i18n.German: "Die Betriebsansichten sind für Betreiber: Ihrem Konto fehlt die Betreiberrolle (Scope %s). Ein Betreiber kann sie mit dem Befehl set-scopes des Auth-Dienstes vergeben."},
	"op.error.nobroker": {i18n.English: "This gateway has no search broker configured.", i18n.German: "Für dieses Gateway ist kein Suchbroker eingerichtet."},
	"op.error.noupload": {i18n.English: "This gateway has no upload service configured.", i18n.German: "Für dieses Gateway ist kein Upload-Dienst eingerichtet."},
	"op.error.form":     {i18n.English: "The form lacks the bank or the site.", i18n.German: "Im Formular fehlt die Bank oder der Standort."},
	"op.error.refused":  {i18n.English: "The service refused: %s", i18n.German: "Der Dienst hat abgelehnt: %s"},

	"op.banks.title":          {i18n.English: "Banks", i18n.German: "Banken"},
	"op.banks.intro":          {i18n.English: "Banks register with the search broker themselves. A new bank waits here until an operator links it to its site and approves it; only then does it receive inquiries.", i18n.German: "Banken registrieren sich selbst beim Suchbroker. Eine neue Bank wartet hier, bis ein Betreiber sie ihrem Standort zuordnet und freigibt; erst dann erhält sie Anfragen."},
	"op.banks.pending":        {i18n.English: "Waiting for approval", i18n.German: "Warten auf Freigabe"},
	"op.banks.nopending":      {i18n.English: "No bank is waiting for approval.", i18n.German: "Keine Bank wartet auf Freigabe."},
	"op.banks.active":         {i18n.English: "Approved banks", i18n.German: "Freigegebene Banken"},
	"op.banks.noactive":       {i18n.English: "No bank has been approved yet.", i18n.German: "Noch keine Bank ist freigegeben."},
	"op.banks.registered":     {i18n.English: "Registered", i18n.German: "Registriert"},
	"op.banks.approved":       {i18n.English: "Approved", i18n.German: "Freigegeben"},
	"op.banks.reported":       {i18n.English: "Site the bank reports", i18n.German: "Vom Standort gemeldeter Name"},
	"op.banks.site":           {i18n.English: "Site", i18n.German: "Standort"},
	"op.banks.site.hint":      {i18n.English: "The id of a site of the site registry (suggested; operators add sites in the site registry view or with broker create-site).", i18n.German: "Die ID eines Standorts des Standortverzeichnisses (vorgeschlagen; Betreiber legen Standorte in der Ansicht Standortverzeichnis oder mit broker create-site an)."},
	"op.banks.approve":        {i18n.English: "Link and approve", i18n.German: "Zuordnen und freigeben"},
	"op.banks.relink":         {i18n.English: "Link to another site", i18n.German: "Einem anderen Standort zuordnen"},
	"op.banks.link":           {i18n.English: "Link", i18n.German: "Zuordnen"},
	"op.banks.delete":         {i18n.English: "Delete this bank…", i18n.German: "Diese Bank löschen …"},
	"op.banks.delete.warn":    {i18n.English: "Deleting %s ends its registration: its token stops working and it must register again.", i18n.German: "Das Löschen von %s beendet ihre Registrierung: Ihr Token wird ungültig, und sie muss sich neu registrieren."},
	"op.banks.delete.confirm": {i18n.English: "Delete the bank", i18n.German: "Bank löschen"},
	"op.banks.done.approved":  {i18n.English: "%s is approved.", i18n.German: "%s ist freigegeben."},
	"op.banks.done.linked":    {i18n.English: "%s is linked to its new site.", i18n.German: "%s ist dem neuen Standort zugeordnet."},
	"op.banks.done.deleted":   {i18n.English: "%s is deleted.", i18n.German: "%s ist gelöscht."},

	"op.sites.title":      {i18n.English: "Sites and uploads", i18n.German: "Standorte und Uploads"},
	"op.sites.intro":      {i18n.English: "Every teiler that may upload, with its patients and its last uploads. A teiler without an upload for more than %s is highlighted.", i18n.German: "Jeder Teiler, der hochladen darf, mit seinen Patienten und seinen letzten Uploads. Ein Teiler ohne Upload seit mehr als %s ist hervorgehoben."},
	"op.sites.stale.one":  {i18n.English: "One teiler has not uploaded for more than %s.", i18n.German: "Ein Teiler hat seit mehr als %s nicht hochgeladen."},
	"op.sites.stalecount": {i18n.English: "%d teilers have not uploaded for more than %s.", i18n.German: "%d Teiler haben seit mehr als %s nicht hochgeladen."},
	"op.sites.site":       {i18n.English: "Site", i18n.German: "Standort"},
	"op.sites.teiler":     {i18n.English: "Teiler", i18n.German: "Teiler"},
	"op.sites.patients":   {i18n.English: "Patients", i18n.German: "Patienten"},
	"op.sites.lastupload": {i18n.English: "Last upload reported", i18n.German: "Letzter gemeldeter Upload"},
	"op.sites.laststored": {i18n.English: "Last patient stored", i18n.German: "Letzter Patient gespeichert"},
	"op.sites.banks":      {i18n.English: "Banks", i18n.German: "Banken"},
	"op.sites.nobank":     {i18n.English: "none", i18n.German: "keine"},
	"op.sites.state":      {i18n.English: "State", i18n.German: "Zustand"},
	"op.sites.stale":      {i18n.English: "No recent upload", i18n.German: "Kein aktueller Upload"},
	"op.sites.fresh":      {i18n.English: "Up to date", i18n.German: "Aktuell"},
	"op.sites.disabled":   {i18n.English: "%d of %d credentials turned off", i18n.German: "%d von %d Zugängen abgeschaltet"},
	"op.sites.none":       {i18n.English: "No site has an upload credential yet.", i18n.German: "Noch kein Standort hat einen Upload-Zugang."},
	"op.sites.banksonly":  {i18n.English: "Sites with banks but no upload credential", i18n.German: "Standorte mit Banken, aber ohne Upload-Zugang"},

	"op.monitoring.title":     {i18n.English: "Monitoring", i18n.German: "Monitoring"},
	"op.monitoring.intro":     {i18n.English: "The latest status report each bank's connector sent.", i18n.German: "Der letzte Statusbericht, den der Connector jeder Bank gesendet hat."},
	"op.monitoring.received":  {i18n.English: "Received", i18n.German: "Empfangen"},
	"op.monitoring.failed":    {i18n.English: "A check failed", i18n.German: "Eine Prüfung ist fehlgeschlagen"},
	"op.monitoring.parameter": {i18n.English: "Check", i18n.German: "Prüfung"},
	"op.monitoring.status":    {i18n.English: "Status", i18n.German: "Status"},
	"op.monitoring.exit":      {i18n.English: "Exit status", i18n.German: "Rückgabewert"},
	"op.monitoring.noitems":   {i18n.English: "The report holds no checks.", i18n.German: "Der Bericht enthält keine Prüfungen."},
	"op.monitoring.none":      {i18n.English: "No bank has sent a status report yet.", i18n.German: "Noch keine Bank hat einen Statusbericht gesendet."},

	"op.registry.title":      {i18n.English: "Registry status", i18n.German: "Registerstatus"},
	"op.registry.intro":      {i18n.English: "What the metadata registry holds, and when it last changed (an import or a deleted namespace).", i18n.German: "Was das Metadatenregister enthält und wann es sich zuletzt geändert hat (ein Import oder ein gelöschter Namensraum)."},
	"op.registry.changed":    {i18n.English: "Last change", i18n.German: "Letzte Änderung"},
	"op.registry.generation": {i18n.English: "Version", i18n.German: "Version"},
	"op.registry.elements":   {i18n.English: "Elements", i18n.German: "Elemente"},
	"op.registry.members":    {i18n.English: "Root members", i18n.German: "Oberste Mitglieder"},
	"op.registry.namespaces": {i18n.English: "Namespaces", i18n.German: "Namensräume"},
	"op.registry.visibility": {i18n.English: "Visibility", i18n.German: "Sichtbarkeit"},
	"op.registry.private":    {i18n.English: "private", i18n.German: "privat"},
	"op.registry.public":     {i18n.English: "public", i18n.German: "öffentlich"},
	"op.registry.none":       {i18n.English: "The registry holds no namespace.", i18n.German: "Das Register enthält keinen Namensraum."},
}

func init() {
	for k, v := range operatorMessages {
		if _, dup := messages[k]; dup {
			panic("explorer: message " + k + " is in both catalogues")
		}
		messages[k] = v
	}
}
