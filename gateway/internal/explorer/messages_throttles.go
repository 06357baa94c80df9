package explorer

import "fris.dev/gateway/internal/i18n"

// throttleMessages are the throttles view's texts, added to the catalogue
// at start like the other operator views'.
var throttleMessages = i18n.Catalogue{
	"op.throttles.title":                {i18n.English: "Throttles", i18n.German: "Drosselungen"},
	"op.throttles.intro":                {i18n.English: "Who the abuse limits slow now (%s): accounts, clients, site credentials and addresses whose next attempt is refused until the time shown. Lifting one forgets what its limit counted, so the holder can sign in at once; it is audited. Lift only for a holder you have recognised: the limit is what holds a guesser back.", i18n.German: "Wen die Missbrauchsgrenzen gerade bremsen (%s): Konten, Clients, Zugänge von Standorten und Adressen, deren nächster Versuch bis zur genannten Zeit abgelehnt wird. Aufheben vergisst, was die Grenze gezählt hat, sodass sich der Inhaber sofort anmelden kann; es wird protokolliert. Nur für einen Inhaber aufheben, den Sie erkannt haben: Die Grenze ist es, die Ratende aufhält."},
	"op.throttles.list":                 {i18n.English: "Slowed now", i18n.German: "Jetzt gebremst"},
	"op.throttles.none":                 {i18n.English: "Nothing is slowed now.", i18n.German: "Gerade wird nichts gebremst."},
	"op.throttles.failed":               {i18n.English: "These services did not answer; their throttles are missing from the list:", i18n.German: "Diese Dienste haben nicht geantwortet; ihre Drosselungen fehlen in der Liste:"},
	"op.throttles.error.none":           {i18n.English: "No service with abuse limits is connected to this gateway.", i18n.German: "Mit diesem Gateway ist kein Dienst mit Missbrauchsgrenzen verbunden."},
	"op.throttles.error.form":           {i18n.English: "The form names no throttle of a known service.", i18n.German: "Das Formular nennt keine Drosselung eines bekannten Dienstes."},
	"op.throttles.who":                  {i18n.English: "Account or address", i18n.German: "Konto oder Adresse"},
	"op.throttles.fromaddr":             {i18n.English: "from", i18n.German: "von"},
	"op.throttles.from":                 {i18n.English: "%s from %s", i18n.German: "%s von %s"},
	"op.throttles.service":              {i18n.English: "Service", i18n.German: "Dienst"},
	"op.throttles.limit":                {i18n.English: "Limit", i18n.German: "Grenze"},
	"op.throttles.failures":             {i18n.English: "Failures", i18n.German: "Fehlversuche"},
	"op.throttles.refused":              {i18n.English: "Refused", i18n.German: "Abgelehnt"},
	"op.throttles.until":                {i18n.English: "Until", i18n.German: "Bis"},
	"op.throttles.action":               {i18n.English: "Action", i18n.German: "Aktion"},
	"op.throttles.lift":                 {i18n.English: "Lift", i18n.German: "Aufheben"},
	"op.throttles.liftnote":             {i18n.English: "Failures are those counted within the limit's window; refused are the attempts turned away since it was listed.", i18n.German: "Fehlversuche sind die im Zeitfenster der Grenze gezählten; abgelehnt sind die seit der Aufnahme in die Liste abgewiesenen Versuche."},
	"op.throttles.left.s":               {i18n.English: "%d s left", i18n.German: "noch %d s"},
	"op.throttles.left.m":               {i18n.English: "%d min left", i18n.German: "noch %d min"},
	"op.throttles.left.h":               {i18n.English: "%d h left", i18n.German: "noch %d h"},
	"op.throttles.done.lifted":          {i18n.English: "The throttle of %s is lifted: its next attempt is admitted at once.", i18n.German: "Die Drosselung von %s ist aufgehoben: Der nächste Versuch wird sofort zugelassen."},
	"op.throttles.done.liftedkey":       {i18n.English: "The throttle is lifted: its next attempt is admitted at once.", i18n.German: "Die Drosselung ist aufgehoben: Der nächste Versuch wird sofort zugelassen."},
	"op.throttles.done.ended":           {i18n.English: "Nothing to lift: that throttle had ended already.", i18n.German: "Nichts aufzuheben: Diese Drosselung war schon abgelaufen."},
	"op.throttles.kind.pair":            {i18n.English: "this account from this address", i18n.German: "dieses Konto von dieser Adresse"},
	"op.throttles.kind.addr":            {i18n.English: "this address, any account", i18n.German: "diese Adresse, jedes Konto"},
	"op.throttles.kind.ceiling":         {i18n.English: "this account from every address", i18n.German: "dieses Konto von allen Adressen"},
	"op.throttles.kind.account":         {i18n.English: "this account's requests", i18n.German: "Anfragen für dieses Konto"},
	"op.throttles.flow.login":           {i18n.English: "Sign-in with a password", i18n.German: "Anmeldung mit Passwort"},
	"op.throttles.flow.client_secret":   {i18n.English: "Client secret", i18n.German: "Client-Geheimnis"},
	"op.throttles.flow.signature":       {i18n.English: "Signed code (user key)", i18n.German: "Signierter Code (Benutzerschlüssel)"},
	"op.throttles.flow.register":        {i18n.English: "Registration", i18n.German: "Registrierung"},
	"op.throttles.flow.password_reset":  {i18n.English: "Password reset", i18n.German: "Passwort zurücksetzen"},
	"op.throttles.flow.account_link":    {i18n.English: "Mailed link", i18n.German: "Link aus einer E-Mail"},
	"op.throttles.flow.passkey":         {i18n.English: "Sign-in with a passkey", i18n.German: "Anmeldung mit Passkey"},
	"op.throttles.flow.basic":           {i18n.English: "Site credential (uploads)", i18n.German: "Zugang eines Standorts (Uploads)"},
	"op.throttles.flow.bank_token":      {i18n.English: "Bank token", i18n.German: "Token einer Bank"},
	"op.throttles.flow.activation_code": {i18n.English: "Bank activation code", i18n.German: "Aktivierungscode einer Bank"},
	"op.throttles.flow.activation_mail": {i18n.English: "Bank activation mail", i18n.German: "Aktivierungs-E-Mail einer Bank"},
}

func init() {
	for k, v := range throttleMessages {
		if _, dup := messages[k]; dup {
			panic("explorer: message " + k + " is in both catalogues")
		}
		messages[k] = v
	}
}
