package explorer

import "fris.dev/gateway/internal/i18n"

// userMessages are the users view's texts, added to the catalogue at start
// like the other operator views' (a key in both is a mistake, refused).
var userMessages = i18n.Catalogue{
	"op.error.noauth": {i18n.English: "This gateway has no identity provider configured.", i18n.German: "Für dieses Gateway ist kein Identitätsanbieter eingerichtet."},

	"op.users.title":       {i18n.English: "Users", i18n.German: "Benutzer"},
	"op.users.intro":       {i18n.English: "The identity provider's users: find them, create them, grant roles and scopes, disable them or end their sessions. A new user gets no password here; they set one with the password reset.", i18n.German: "Die Benutzer des Identitätsanbieters: finden, anlegen, Rollen und Scopes vergeben, sperren oder ihre Sitzungen beenden. Ein neuer Benutzer erhält hier kein Passwort; er setzt es über das Zurücksetzen des Passworts."},
	"op.users.search":      {i18n.English: "Email or name", i18n.German: "E-Mail oder Name"},
	"op.users.search.go":   {i18n.English: "Search", i18n.German: "Suchen"},
	"op.users.list":        {i18n.English: "Users", i18n.German: "Benutzer"},
	"op.users.showing":     {i18n.English: "%d–%d of %d", i18n.German: "%d–%d von %d"},
	"op.users.none":        {i18n.English: "No user matches.", i18n.German: "Kein Benutzer passt."},
	"op.users.pages":       {i18n.English: "Pages", i18n.German: "Seiten"},
	"op.users.page":        {i18n.English: "Page %d of %d", i18n.German: "Seite %d von %d"},
	"op.users.prev":        {i18n.English: "Previous page", i18n.German: "Vorige Seite"},
	"op.users.next":        {i18n.English: "Next page", i18n.German: "Nächste Seite"},
	"op.users.email":       {i18n.English: "Email", i18n.German: "E-Mail"},
	"op.users.name":        {i18n.English: "Name", i18n.German: "Name"},
	"op.users.created":     {i18n.English: "Created", i18n.German: "Angelegt"},
	"op.users.lastsignin":  {i18n.English: "Last sign-in", i18n.German: "Letzte Anmeldung"},
	"op.users.nosignin":    {i18n.English: "none recorded", i18n.German: "keine erfasst"},
	"op.users.from":        {i18n.English: "from", i18n.German: "von"},
	"op.users.password":    {i18n.English: "Password set", i18n.German: "Passwort gesetzt"},
	"op.users.nopassword":  {i18n.English: "no (waits for the password reset)", i18n.German: "nein (wartet auf das Zurücksetzen des Passworts)"},
	"op.users.verified":    {i18n.English: "Email verified", i18n.German: "E-Mail bestätigt"},
	"op.users.yes":         {i18n.English: "yes", i18n.German: "ja"},
	"op.users.no":          {i18n.English: "no", i18n.German: "nein"},
	"op.users.disabled":    {i18n.English: "disabled", i18n.German: "gesperrt"},
	"op.users.create":      {i18n.English: "Create a user", i18n.German: "Benutzer anlegen"},
	"op.users.create.hint": {i18n.English: "The user has no password until they set one with the password reset.", i18n.German: "Der Benutzer hat kein Passwort, bis er eines über das Zurücksetzen des Passworts setzt."},
	"op.users.create.go":   {i18n.English: "Create", i18n.German: "Anlegen"},
	"op.users.roles":       {i18n.English: "Roles and scopes", i18n.German: "Rollen und Scopes"},
	"op.users.scopes":      {i18n.English: "Roles and scopes…", i18n.German: "Rollen und Scopes …"},
	"op.users.scopes.go":   {i18n.English: "Save roles and scopes", i18n.German: "Rollen und Scopes speichern"},
	"op.users.other":       {i18n.English: "Other scopes", i18n.German: "Weitere Scopes"},
	"op.users.other.hint":  {i18n.English: "Separated by spaces, e.g. mdr:<namespace> for a private namespace of the registry. Changes reach the user's next sign-in.", i18n.German: "Durch Leerzeichen getrennt, z. B. mdr:<Namensraum> für einen privaten Namensraum des Registers. Änderungen gelten ab der nächsten Anmeldung des Benutzers."},

	"op.users.role.broker:researcher": {i18n.English: "researcher: searches and inquiries", i18n.German: "Forschende: Suchen und Anfragen"},
	"op.users.role.users:search":      {i18n.English: "may search the users", i18n.German: "darf Benutzer suchen"},
	"op.users.role.fris:operator":     {i18n.English: "operator: these views", i18n.German: "Betreiber: diese Ansichten"},

	"op.users.enable":        {i18n.English: "Enable", i18n.German: "Entsperren"},
	"op.users.disable":       {i18n.English: "Disable this user…", i18n.German: "Diesen Benutzer sperren …"},
	"op.users.disable.warn":  {i18n.English: "Disabling %s ends their sessions and refuses their sign-in until an operator enables them again.", i18n.German: "Das Sperren von %s beendet die Sitzungen und verweigert die Anmeldung, bis ein Betreiber den Benutzer wieder entsperrt."},
	"op.users.disable.go":    {i18n.English: "Disable the user", i18n.German: "Benutzer sperren"},
	"op.users.sessions":      {i18n.English: "End all sessions…", i18n.German: "Alle Sitzungen beenden …"},
	"op.users.sessions.warn": {i18n.English: "Every token of %s issued until now stops working within seconds; they may sign in again.", i18n.German: "Jedes bisher ausgestellte Token von %s wird binnen Sekunden ungültig; eine neue Anmeldung ist möglich."},
	"op.users.sessions.go":   {i18n.English: "End the sessions", i18n.German: "Sitzungen beenden"},
	"op.users.confirm":       {i18n.English: "Yes, I mean it", i18n.German: "Ja, das ist gewollt"},

	"op.users.done.created":  {i18n.English: "%s is created.", i18n.German: "%s ist angelegt."},
	"op.users.done.disabled": {i18n.English: "%s is disabled.", i18n.German: "%s ist gesperrt."},
	"op.users.done.enabled":  {i18n.English: "%s is enabled.", i18n.German: "%s ist entsperrt."},
	"op.users.done.scopes":   {i18n.English: "The roles and scopes of %s are saved; they apply from the next sign-in.", i18n.German: "Die Rollen und Scopes von %s sind gespeichert; sie gelten ab der nächsten Anmeldung."},
	"op.users.done.sessions": {i18n.English: "Every session of %s is ended.", i18n.German: "Alle Sitzungen von %s sind beendet."},

	"op.users.error.email":   {i18n.English: "The form lacks the user's email.", i18n.German: "Im Formular fehlt die E-Mail des Benutzers."},
	"op.users.error.confirm": {i18n.English: "Please confirm with the checkbox.", i18n.German: "Bitte mit dem Kontrollkästchen bestätigen."},
	"op.users.error.self":    {i18n.English: "You cannot disable your own account: another operator can.", i18n.German: "Das eigene Konto lässt sich nicht sperren: Ein anderer Betreiber kann es."},
	"op.users.error.scopes":  {i18n.English: "A scope is malformed: known roles, and other scopes as single words.", i18n.German: "Ein Scope ist fehlerhaft: bekannte Rollen, und weitere Scopes als einzelne Wörter."},
}

func init() {
	for k, v := range userMessages {
		if _, dup := messages[k]; dup {
			panic("explorer: message " + k + " is in both catalogues")
		}
		messages[k] = v
	}
}
