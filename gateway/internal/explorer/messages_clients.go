package explorer

import "fris.dev/gateway/internal/i18n"

// clientMessages are the clients and signing keys views' texts, added to
// the catalogue at start like the other operator views'.
var clientMessages = i18n.Catalogue{
	"op.clients.title":           {i18n.English: "Clients", i18n.German: "Clients"},
	"op.clients.intro":           {i18n.English: "The applications that may sign users in or ask for tokens of their own (OAuth clients): create them, change their description and redirect URLs, give them a new secret, disable them. A secret is shown once, when it is made; the identity provider keeps only its hash.", i18n.German: "Die Anwendungen, die Benutzer anmelden oder eigene Tokens anfordern dürfen (OAuth-Clients): anlegen, Beschreibung und Weiterleitungs-URLs ändern, ein neues Geheimnis vergeben, sperren. Ein Geheimnis wird einmal gezeigt, wenn es entsteht; der Identitätsanbieter speichert nur seinen Hash."},
	"op.clients.list":            {i18n.English: "Clients", i18n.German: "Clients"},
	"op.clients.none":            {i18n.English: "There is no client yet.", i18n.German: "Es gibt noch keinen Client."},
	"op.clients.listfailed":      {i18n.English: "The list of clients could not be read just now; open the Clients tab again for it.", i18n.German: "Die Liste der Clients ließ sich gerade nicht lesen; zum Anzeigen den Reiter Clients erneut öffnen."},
	"op.clients.id":              {i18n.English: "Client ID", i18n.German: "Client-ID"},
	"op.clients.id.choose":       {i18n.English: "Client ID (optional)", i18n.German: "Client-ID (optional)"},
	"op.clients.id.hint":         {i18n.English: "Letters, digits and . _ ~ -; generated when empty.", i18n.German: "Buchstaben, Ziffern und . _ ~ -; wird erzeugt, wenn leer."},
	"op.clients.name":            {i18n.English: "Name", i18n.German: "Name"},
	"op.clients.description":     {i18n.English: "Description", i18n.German: "Beschreibung"},
	"op.clients.type":            {i18n.English: "Type", i18n.German: "Typ"},
	"op.clients.redirects":       {i18n.English: "Redirect URLs", i18n.German: "Weiterleitungs-URLs"},
	"op.clients.redirects.hint":  {i18n.English: "One absolute http(s) URL a line, without fragment, at most 32; none for a client that only asks for tokens of its own.", i18n.German: "Eine absolute http(s)-URL je Zeile, ohne Fragment, höchstens 32; keine für einen Client, der nur eigene Tokens anfordert."},
	"op.clients.noredirects":     {i18n.English: "none (tokens of its own only)", i18n.German: "keine (nur eigene Tokens)"},
	"op.clients.disabled":        {i18n.English: "disabled", i18n.German: "gesperrt"},
	"op.clients.explorer":        {i18n.English: "this Explorer", i18n.German: "dieser Explorer"},
	"op.clients.explorer.hint":   {i18n.English: "The client this Explorer signs in with: its secret is rotated and it is disabled with bin/auth, together with the gateway's secret file, not here.", i18n.German: "Der Client, mit dem sich dieser Explorer anmeldet: Sein Geheimnis wird mit bin/auth zusammen mit der Geheimnisdatei des Gateways erneuert und er wird dort gesperrt, nicht hier."},
	"op.clients.create":          {i18n.English: "Create a client", i18n.German: "Client anlegen"},
	"op.clients.create.go":       {i18n.English: "Create", i18n.German: "Anlegen"},
	"op.clients.edit":            {i18n.English: "Name, description and redirect URLs…", i18n.German: "Name, Beschreibung und Weiterleitungs-URLs …"},
	"op.clients.edit.go":         {i18n.English: "Save", i18n.German: "Speichern"},
	"op.clients.secret":          {i18n.English: "Client secret", i18n.German: "Client-Geheimnis"},
	"op.clients.secret.heading":  {i18n.English: "The secret of %s", i18n.German: "Das Geheimnis von %s"},
	"op.clients.secret.once":     {i18n.English: "Copy the secret now: it is shown this once and cannot be shown again. Lost, it can only be replaced by a new one.", i18n.German: "Das Geheimnis jetzt kopieren: Es wird nur dieses eine Mal gezeigt. Geht es verloren, lässt es sich nur durch ein neues ersetzen."},
	"op.clients.rotate":          {i18n.English: "New secret…", i18n.German: "Neues Geheimnis …"},
	"op.clients.rotate.warn":     {i18n.English: "%s gets a new secret, shown once on the next page; the old one is refused from now on, so the application fails until it has the new one.", i18n.German: "%s erhält ein neues Geheimnis, das die nächste Seite einmal zeigt; das alte wird ab sofort abgelehnt, die Anwendung scheitert also, bis sie das neue hat."},
	"op.clients.rotate.revoke":   {i18n.English: "Also end every token issued to the client so far, its users' included (the old secret leaked)", i18n.German: "Auch jedes bisher an den Client ausgestellte Token beenden, auch die seiner Benutzer (das alte Geheimnis ist bekannt geworden)"},
	"op.clients.rotate.go":       {i18n.English: "Make a new secret", i18n.German: "Neues Geheimnis erzeugen"},
	"op.clients.enable":          {i18n.English: "Enable", i18n.German: "Entsperren"},
	"op.clients.disable":         {i18n.English: "Disable this client…", i18n.German: "Diesen Client sperren …"},
	"op.clients.disable.warn":    {i18n.English: "Disabling %s ends every token issued to it, its users' included, and refuses its sign-ins and token requests until an operator enables it again.", i18n.German: "Das Sperren von %s beendet jedes an ihn ausgestellte Token, auch die seiner Benutzer, und verweigert Anmeldungen und Token-Anfragen, bis ein Betreiber ihn wieder entsperrt."},
	"op.clients.disable.go":      {i18n.English: "Disable the client", i18n.German: "Client sperren"},
	"op.clients.done.created":    {i18n.English: "The client %s is created.", i18n.German: "Der Client %s ist angelegt."},
	"op.clients.done.rotated":    {i18n.English: "The client %s has a new secret; the old one is refused.", i18n.German: "Der Client %s hat ein neues Geheimnis; das alte wird abgelehnt."},
	"op.clients.done.updated":    {i18n.English: "The client %s is saved.", i18n.German: "Der Client %s ist gespeichert."},
	"op.clients.done.disabled":   {i18n.English: "The client %s is disabled.", i18n.German: "Der Client %s ist gesperrt."},
	"op.clients.done.enabled":    {i18n.English: "The client %s is enabled.", i18n.German: "Der Client %s ist entsperrt."},
	"op.clients.error.id":        {i18n.English: "The form lacks the client ID, or it is too long.", i18n.German: "Im Formular fehlt die Client-ID, oder sie ist zu lang."},
	"op.clients.error.self":      {i18n.English: "This is the client the Explorer signs in with: disabling it or changing its secret here would sign everyone out. Use bin/auth and the gateway's secret file.", i18n.German: "Mit diesem Client meldet sich der Explorer an: Ihn hier zu sperren oder sein Geheimnis zu ändern, würde alle abmelden. Dafür bin/auth und die Geheimnisdatei des Gateways verwenden."},
	"op.clients.error.size":      {i18n.English: "The name (at most 256 bytes) or the description (at most 4096 bytes) is too long.", i18n.German: "Der Name (höchstens 256 Bytes) oder die Beschreibung (höchstens 4096 Bytes) ist zu lang."},
	"op.clients.error.redirects": {i18n.English: "At most %d redirect URLs of at most %d bytes each, and a known type and token signature.", i18n.German: "Höchstens %d Weiterleitungs-URLs mit je höchstens %d Bytes, und ein bekannter Typ und eine bekannte Token-Signatur."},

	"op.clients.alg":          {i18n.English: "Token signature", i18n.German: "Token-Signatur"},
	"op.clients.alg.hint":     {i18n.English: "How the client's access and id tokens are signed. RS256 is what Samply clients verify (they expect an RSA key); standard OpenID Connect clients and FRIS itself also take ES256 and EdDSA, which cost the identity provider a fraction of the CPU. A change applies to the tokens issued from then on.", i18n.German: "Wie die Zugriffs- und ID-Tokens des Clients signiert werden. RS256 prüfen Samply-Clients (sie erwarten einen RSA-Schlüssel); gewöhnliche OpenID-Connect-Clients und FRIS selbst nehmen auch ES256 und EdDSA, die den Identitätsanbieter einen Bruchteil der Rechenzeit kosten. Eine Änderung gilt für die ab dann ausgestellten Tokens."},
	"op.keys.title":           {i18n.English: "Signing keys", i18n.German: "Signaturschlüssel"},
	"op.keys.intro":           {i18n.English: "The keys the identity provider signs tokens with, one active key per algorithm: a client's access and id tokens are signed with the active key of the client's algorithm (RS256 unless an operator chose ES256 or EdDSA on the Clients tab). A retired key stays published (in /jwks; the RSA keys also in /certs) until the last token it signed has expired, so a rotation signs nobody out. Refresh tokens are signed with a key of their own that only the identity provider reads: it is never published, not listed here, and rotates with these.", i18n.German: "Die Schlüssel, mit denen der Identitätsanbieter Tokens signiert, ein aktiver Schlüssel je Algorithmus: Zugriffs- und ID-Tokens eines Clients signiert der aktive Schlüssel seines Algorithmus (RS256, sofern kein Operator auf dem Reiter Clients ES256 oder EdDSA gewählt hat). Ein ausgemusterter Schlüssel bleibt veröffentlicht (in /jwks, die RSA-Schlüssel auch in /certs), bis das letzte von ihm signierte Token abgelaufen ist, sodass eine Rotation niemanden abmeldet. Refresh-Tokens signiert ein eigener Schlüssel, den nur der Identitätsanbieter liest: Er wird nie veröffentlicht, hier nicht aufgeführt und mit diesen rotiert."},
	"op.keys.list":            {i18n.English: "Keys, newest first", i18n.German: "Schlüssel, neueste zuerst"},
	"op.keys.none":            {i18n.English: "There is no signing key yet.", i18n.German: "Es gibt noch keinen Signaturschlüssel."},
	"op.keys.alg":             {i18n.English: "Algorithm", i18n.German: "Algorithmus"},
	"op.keys.retired":         {i18n.English: "Retired", i18n.German: "Ausgemustert"},
	"op.keys.publishuntil":    {i18n.English: "Published until", i18n.German: "Veröffentlicht bis"},
	"op.keys.state.active":    {i18n.English: "active: signs new tokens of its algorithm", i18n.German: "aktiv: signiert neue Tokens seines Algorithmus"},
	"op.keys.state.published": {i18n.English: "retired, still published", i18n.German: "ausgemustert, noch veröffentlicht"},
	"op.keys.state.retired":   {i18n.English: "retired", i18n.German: "ausgemustert"},
	"op.keys.rotate":          {i18n.English: "Rotate now…", i18n.German: "Jetzt rotieren …"},
	"op.keys.rotate.warn":     {i18n.English: "A new key of every algorithm signs from now on; the active ones are retired and stay published until their tokens expire. Services that pinned the old public key (networks running with automatic rotation off) need the new one.", i18n.German: "Ab jetzt signiert je Algorithmus ein neuer Schlüssel; die aktiven werden ausgemustert und bleiben veröffentlicht, bis ihre Tokens ablaufen. Dienste, die den alten öffentlichen Schlüssel fest hinterlegt haben (Netze mit abgeschalteter automatischer Rotation), brauchen den neuen."},
	"op.keys.rotate.go":       {i18n.English: "Rotate the signing keys", i18n.German: "Signaturschlüssel rotieren"},
	"op.keys.done.rotated":    {i18n.English: "New keys sign from now on; the RSA key is %s.", i18n.German: "Ab jetzt signieren neue Schlüssel; der RSA-Schlüssel ist %s."},
}

func init() {
	for k, v := range clientMessages {
		if _, dup := messages[k]; dup {
			panic("explorer: message " + k + " is in both catalogues")
		}
		messages[k] = v
	}
}
