package explorer

import "fris.dev/gateway/internal/i18n"

// credentialMessages are the texts of the account page's credential
// section and of the console's credentials of a user (credentials.go,
// users_credentials.go and their templates).
var credentialMessages = i18n.Catalogue{
	"acct.cred.title":           {i18n.English: "Ways to sign in", i18n.German: "Anmeldewege"},
	"acct.cred.intro":           {i18n.English: "Everything that signs in to your account: your password, keys registered for it and passkeys. One marked “unproven” was added before anyone confirmed your email address: if you do not know it, remove it.", i18n.German: "Alles, womit man sich bei Ihrem Konto anmeldet: Ihr Passwort, für das Konto registrierte Schlüssel und Passkeys. Ein als „unbestätigt“ markierter wurde hinzugefügt, bevor jemand Ihre E-Mail-Adresse bestätigt hatte: Kennen Sie ihn nicht, entfernen Sie ihn."},
	"acct.cred.caption":         {i18n.English: "The password first, then keys and passkeys, oldest first.", i18n.German: "Zuerst das Passwort, dann Schlüssel und Passkeys, die ältesten zuerst."},
	"acct.cred.kind":            {i18n.English: "Way to sign in", i18n.German: "Anmeldeweg"},
	"acct.cred.added":           {i18n.English: "Added", i18n.German: "Hinzugefügt"},
	"acct.cred.used":            {i18n.English: "Last used", i18n.German: "Zuletzt benutzt"},
	"acct.cred.unknown":         {i18n.English: "not recorded", i18n.German: "nicht aufgezeichnet"},
	"acct.cred.unproven":        {i18n.English: "unproven", i18n.German: "unbestätigt"},
	"acct.cred.keep":            {i18n.English: "change it above", i18n.German: "oben ändern"},
	"acct.cred.kind.password":   {i18n.English: "Password", i18n.German: "Passwort"},
	"acct.cred.kind.key":        {i18n.English: "Key", i18n.German: "Schlüssel"},
	"acct.cred.kind.passkey":    {i18n.English: "Passkey", i18n.German: "Passkey"},
	"acct.cred.by.registration": {i18n.English: "registered without sign-in", i18n.German: "ohne Anmeldung registriert"},
	"acct.cred.by.holder":       {i18n.English: "by you, signed in", i18n.German: "von Ihnen, angemeldet"},
	"acct.cred.by.operator":     {i18n.English: "by an operator", i18n.German: "von einem Betreiber"},
	"acct.cred.by.reset":        {i18n.English: "with a reset link", i18n.German: "mit einem Link zum Zurücksetzen"},
	"acct.cred.remove":          {i18n.English: "Remove", i18n.German: "Entfernen"},
	"acct.cred.remove.warn":     {i18n.English: "It will no longer sign anyone in. If nobody had proven it, every sign-in of your account ends with it.", i18n.German: "Damit meldet sich dann niemand mehr an. Hatte niemand ihn bestätigt, enden mit ihm alle Anmeldungen Ihres Kontos."},
	"acct.cred.remove.confirm":  {i18n.English: "Remove it now", i18n.German: "Jetzt entfernen"},
	"acct.cred.removed":         {i18n.English: "It has been removed.", i18n.German: "Er wurde entfernt."},
	"acct.cred.last":            {i18n.English: "This is your only way to sign in: add another before you remove it.", i18n.German: "Das ist Ihr einziger Anmeldeweg: Fügen Sie einen weiteren hinzu, bevor Sie ihn entfernen."},
	"acct.cred.refused":         {i18n.English: "This way to sign in cannot be removed.", i18n.German: "Dieser Anmeldeweg kann nicht entfernt werden."},
	"acct.cred.off":             {i18n.English: "The ways to sign in cannot be listed right now.", i18n.German: "Die Anmeldewege können gerade nicht angezeigt werden."},
	"acct.cred.gone":            {i18n.English: "When you confirmed your email address, these ways to sign in were removed: nobody had proven them, and every sign-in made with them ended.", i18n.German: "Als Sie Ihre E-Mail-Adresse bestätigt haben, wurden diese Anmeldewege entfernt: Niemand hatte sie bestätigt, und jede mit ihnen begonnene Anmeldung wurde beendet."},
	"acct.cred.goneat":          {i18n.English: "removed", i18n.German: "entfernt"},
}

func init() {
	for k, v := range credentialMessages {
		if _, dup := messages[k]; dup {
			panic("explorer: message " + k + " is in both catalogues")
		}
		messages[k] = v
	}
}

// userCredentialMessages are the console's (users_credentials.go and
// templates/operator-user-credentials.html, the marks in the users list).
var userCredentialMessages = i18n.Catalogue{
	"op.users.creds":                 {i18n.English: "Ways to sign in", i18n.German: "Anmeldewege"},
	"op.users.creds.show":            {i18n.English: "Show and remove", i18n.German: "Anzeigen und entfernen"},
	"op.users.creds.someunproven":    {i18n.English: "some nobody has proven", i18n.German: "manche von niemandem bestätigt"},
	"op.users.creds.title":           {i18n.English: "Ways to sign in", i18n.German: "Anmeldewege"},
	"op.users.creds.intro":           {i18n.English: "Every way to sign in to %s: how and when it was added, whether anyone has proven it (added by an operator, or by the holder of the verified address), when it was last used. Removing a key or passkey ends every sign-in of the user.", i18n.German: "Jeder Anmeldeweg von %s: wie und wann er hinzugefügt wurde, ob jemand ihn bestätigt hat (von einem Betreiber hinzugefügt oder vom Inhaber der bestätigten Adresse), wann er zuletzt benutzt wurde. Das Entfernen eines Schlüssels oder Passkeys beendet jede Anmeldung des Benutzers."},
	"op.users.creds.proven":          {i18n.English: "Proven", i18n.German: "Bestätigt"},
	"op.users.creds.none":            {i18n.English: "The user has no way to sign in.", i18n.German: "Der Benutzer hat keinen Anmeldeweg."},
	"op.users.creds.done":            {i18n.English: "Removed; every sign-in of the user has ended.", i18n.German: "Entfernt; jede Anmeldung des Benutzers ist beendet."},
	"op.users.creds.remove.warn":     {i18n.English: "It will no longer sign anyone in, and every token of the user ends now.", i18n.German: "Damit meldet sich dann niemand mehr an, und jedes Token des Benutzers endet sofort."},
	"op.users.creds.gone":            {i18n.English: "Removed when the owner confirmed the address", i18n.German: "Entfernt, als der Inhaber die Adresse bestätigte"},
	"op.users.creds.by.registration": {i18n.English: "registered without sign-in", i18n.German: "ohne Anmeldung registriert"},
	"op.users.creds.by.holder":       {i18n.English: "by the signed-in holder", i18n.German: "vom angemeldeten Inhaber"},
	"op.users.creds.by.operator":     {i18n.English: "by an operator", i18n.German: "von einem Betreiber"},
	"op.users.creds.by.reset":        {i18n.English: "with a reset link", i18n.German: "mit einem Link zum Zurücksetzen"},
	"op.users.mark.unproven":         {i18n.English: "unproven credentials", i18n.German: "unbestätigte Anmeldewege"},
	"op.users.mark.unverified":       {i18n.English: "address unverified", i18n.German: "Adresse unbestätigt"},
	"op.users.grant.title":           {i18n.English: "Confirm the grant", i18n.German: "Vergabe bestätigen"},
	"op.users.grant.intro":           {i18n.English: "Whoever holds the credentials of %s gets the role. Check them first:", i18n.German: "Wer die Anmeldewege von %s hält, bekommt die Rolle. Prüfen Sie sie zuerst:"},
	"op.users.grant.confirm":         {i18n.English: "I have checked the account and grant the roles anyway.", i18n.German: "Ich habe das Konto geprüft und vergebe die Rollen trotzdem."},
	"op.users.grant.go":              {i18n.English: "Grant the roles", i18n.German: "Rollen vergeben"},
}

func init() {
	for k, v := range userCredentialMessages {
		if _, dup := messages[k]; dup {
			panic("explorer: message " + k + " is in both catalogues")
		}
		messages[k] = v
	}
}
