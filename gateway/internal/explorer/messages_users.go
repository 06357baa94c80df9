package explorer

import "fris.dev/gateway/internal/i18n"

// userMessages are the users view's texts, added to the catalogue at start
// like the other operator views' (a key in both is a mistake, refused).
var userMessages = i18n.Catalogue{
	"op.error.noauth": {i18n.English: "This gateway has no identity provider configured.", i18n.German: "Für dieses Gateway ist kein Identitätsanbieter eingerichtet."},

	"op.users.title":       {i18n.English: "Users", i18n.German: "Benutzer"},
	"op.users.intro":       {i18n.English: "The identity provider's users: find them, create them, grant roles and scopes, disable them, end their sessions, send them a password-reset link or see their recent sign-ins. A new user gets no password here; they set one with the password reset.", i18n.German: "Die Benutzer des Identitätsanbieters: finden, anlegen, Rollen und Scopes vergeben, sperren, ihre Sitzungen beenden, ihnen einen Link zum Zurücksetzen des Passworts senden oder ihre letzten Anmeldungen sehen. Ein neuer Benutzer erhält hier kein Passwort; er setzt es über das Zurücksetzen des Passworts."},
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

	"op.users.col.email":      {i18n.English: "Email", i18n.German: "E-Mail"},
	"op.users.col.name":       {i18n.English: "Name", i18n.German: "Name"},
	"op.users.col.roles":      {i18n.English: "Roles and scopes", i18n.German: "Rollen und Scopes"},
	"op.users.col.verified":   {i18n.English: "Email verified", i18n.German: "E-Mail bestätigt"},
	"op.users.col.factor":     {i18n.English: "Second factor", i18n.German: "Zweiter Faktor"},
	"op.users.col.lastsignin": {i18n.English: "Last sign-in", i18n.German: "Letzte Anmeldung"},
	"op.users.col.state":      {i18n.English: "State", i18n.German: "Zustand"},
	"op.users.active":         {i18n.English: "active", i18n.German: "aktiv"},
	"op.users.factor.passkey": {i18n.English: "passkey", i18n.German: "Passkey"},
	"op.users.factor.none":    {i18n.English: "none", i18n.German: "keiner"},
	"op.users.user.title":     {i18n.English: "User", i18n.German: "Benutzer"},
	"op.users.actions":        {i18n.English: "Actions", i18n.German: "Aktionen"},
	"op.users.error.nouser":   {i18n.English: "There is no such user.", i18n.German: "Diesen Benutzer gibt es nicht."},

	"op.users.role.broker:researcher": {i18n.English: "researcher: searches and inquiries", i18n.German: "Forschende: Suchen und Anfragen"},
	"op.users.role.users:search":      {i18n.English: "may search the users", i18n.German: "darf Benutzer suchen"},
	"op.users.role.fris:operator":     {i18n.English: "operator: these views", i18n.German: "Betreiber: diese Ansichten"},
	"op.users.role.fris:user-admin":   {i18n.English: "user administrator: this view only", i18n.German: "Benutzerverwaltung: nur diese Ansicht"},

	"op.error.userscope":  {i18n.English: "The users view is for operators and user administrators: your account lacks the role (scope %s). An operator can grant it.", i18n.German: "Die Benutzeransicht ist für Betreiber und die Benutzerverwaltung: Ihrem Konto fehlt die Rolle (Scope %s). Ein Betreiber kann sie vergeben."},
	"op.users.locked":     {i18n.English: "This user holds an administrator's role: only an operator sees their details and changes them.", i18n.German: "Dieser Benutzer hat eine Administratorrolle: Nur ein Betreiber sieht seine Angaben und kann ihn ändern."},
	"op.users.reset":      {i18n.English: "Send a password-reset link", i18n.German: "Link zum Zurücksetzen des Passworts senden"},
	"op.users.reset.hint": {i18n.English: "The link goes to the user's email address; it works once and expires. The password stays until it is used.", i18n.German: "Der Link geht an die E-Mail-Adresse des Benutzers; er gilt einmal und läuft ab. Das Passwort bleibt, bis er benutzt wird."},
	"op.users.done.reset": {i18n.English: "A password-reset link is sent to %s.", i18n.German: "Ein Link zum Zurücksetzen des Passworts ist an %s gesendet."},

	"op.users.required":                     {i18n.English: "Required actions", i18n.German: "Geforderte Aktionen"},
	"op.users.required.hint":                {i18n.English: "The next sign-in leads the user through the checked actions before they reach the application. A confirmed address, a changed password or a second factor (an authenticator app or a passkey) clears its action.", i18n.German: "Die nächste Anmeldung führt den Benutzer durch die angekreuzten Aktionen, bevor er die Anwendung erreicht. Eine bestätigte Adresse, ein geändertes Passwort oder ein zweiter Faktor (Authenticator-App oder Passkey) erledigt die jeweilige Aktion."},
	"op.users.required.verify_email":        {i18n.English: "Verify the email address (a link is mailed at sign-in)", i18n.German: "E-Mail-Adresse bestätigen (bei der Anmeldung wird ein Link gesendet)"},
	"op.users.required.change_password":     {i18n.English: "Change the password", i18n.German: "Passwort ändern"},
	"op.users.required.add_second_factor":   {i18n.English: "Add a second factor", i18n.German: "Zweiten Faktor hinzufügen"},
	"op.users.required.go":                  {i18n.English: "Save the required actions", i18n.German: "Geforderte Aktionen speichern"},
	"op.users.temp":                         {i18n.English: "Set a temporary password", i18n.German: "Vorläufiges Passwort setzen"},
	"op.users.temp.warn":                    {i18n.English: "A generated password replaces the password of %s and every session of the user ends. You see it once, on the next page: pass it on by a safe way.", i18n.German: "Ein erzeugtes Passwort ersetzt das Passwort von %s, und alle Sitzungen des Benutzers enden. Sie sehen es einmal, auf der nächsten Seite: Geben Sie es auf sicherem Weg weiter."},
	"op.users.temp.optional":                {i18n.English: "Do not require a change at the next sign-in", i18n.German: "Keine Änderung bei der nächsten Anmeldung verlangen"},
	"op.users.temp.go":                      {i18n.English: "Set a temporary password", i18n.German: "Vorläufiges Passwort setzen"},
	"op.users.temp.title":                   {i18n.English: "Temporary password", i18n.German: "Vorläufiges Passwort"},
	"op.users.temp.shown":                   {i18n.English: "The temporary password of %s. It is shown only now and stored only hashed: copy it and pass it on by a safe way.", i18n.German: "Das vorläufige Passwort von %s. Es wird nur jetzt angezeigt und nur als Hash gespeichert: Kopieren Sie es und geben Sie es auf sicherem Weg weiter."},
	"op.users.temp.change":                  {i18n.English: "The user must choose a new password at the next sign-in.", i18n.German: "Der Benutzer muss bei der nächsten Anmeldung ein neues Passwort wählen."},
	"op.users.temp.nochange":                {i18n.English: "The user may keep it; no change is required.", i18n.German: "Der Benutzer darf es behalten; eine Änderung wird nicht verlangt."},
	"op.users.signins":                      {i18n.English: "Recent sign-ins", i18n.German: "Letzte Anmeldungen"},
	"op.users.signins.title":                {i18n.English: "Recent sign-ins", i18n.German: "Letzte Anmeldungen"},
	"op.users.signins.intro":                {i18n.English: "The last sign-ins of %s, newest first: at most ten, kept while the identity provider's store keeps them (the audit log has every one).", i18n.German: "Die letzten Anmeldungen von %s, neueste zuerst: höchstens zehn, solange der Speicher des Identitätsanbieters sie hält (das Audit-Protokoll enthält jede)."},
	"op.users.signins.at":                   {i18n.English: "When", i18n.German: "Wann"},
	"op.users.signins.method":               {i18n.English: "Method", i18n.German: "Verfahren"},
	"op.users.signins.client":               {i18n.English: "Client", i18n.German: "Client"},
	"op.users.signins.addr":                 {i18n.English: "Address", i18n.German: "Adresse"},
	"op.users.signins.none":                 {i18n.English: "No sign-in recorded.", i18n.German: "Keine Anmeldung erfasst."},
	"op.users.signins.back":                 {i18n.English: "Back to the users", i18n.German: "Zurück zu den Benutzern"},
	"op.users.signins.method.password":      {i18n.English: "password", i18n.German: "Passwort"},
	"op.users.signins.method.passkey":       {i18n.English: "passkey", i18n.German: "Passkey"},
	"op.users.signins.method.key":           {i18n.English: "key (signed request)", i18n.German: "Schlüssel (signierte Anfrage)"},
	"op.users.signins.method.password+totp": {i18n.English: "password and authenticator app", i18n.German: "Passwort und Authenticator-App"},
	"op.users.signins.method.other":         {i18n.English: "other", i18n.German: "anderes"},

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
	"op.users.done.actions":  {i18n.English: "The required actions of %s are saved; they apply from the next sign-in.", i18n.German: "Die geforderten Aktionen von %s sind gespeichert; sie gelten ab der nächsten Anmeldung."},
	"op.users.done.sessions": {i18n.English: "Every session of %s is ended.", i18n.German: "Alle Sitzungen von %s sind beendet."},

	"op.users.error.email":   {i18n.English: "The form lacks the user's email.", i18n.German: "Im Formular fehlt die E-Mail des Benutzers."},
	"op.users.error.actions": {i18n.English: "Unknown required action.", i18n.German: "Unbekannte geforderte Aktion."},
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
