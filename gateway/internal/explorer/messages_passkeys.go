package explorer

import "fris.dev/gateway/internal/i18n"

// passkeyMessages are the account page's passkey section's texts
// (passkeys.go, templates/account-passkeys.html).
var passkeyMessages = i18n.Catalogue{
	"acct.pk.title":          {i18n.English: "Passkeys", i18n.German: "Passkeys"},
	"acct.pk.intro":          {i18n.English: "A passkey signs you in without a password, with your device's screen lock or a security key. It works only on this site, so a fake sign-in page cannot use it.", i18n.German: "Ein Passkey meldet Sie ohne Passwort an, mit der Bildschirmsperre Ihres Geräts oder einem Sicherheitsschlüssel. Er funktioniert nur auf dieser Website, eine gefälschte Anmeldeseite kann ihn nicht nutzen."},
	"acct.pk.caption":        {i18n.English: "Your passkeys, oldest first.", i18n.German: "Ihre Passkeys, der älteste zuerst."},
	"acct.pk.name":           {i18n.English: "Name", i18n.German: "Name"},
	"acct.pk.created":        {i18n.English: "Added", i18n.German: "Hinzugefügt"},
	"acct.pk.used":           {i18n.English: "Last used", i18n.German: "Zuletzt benutzt"},
	"acct.pk.actions":        {i18n.English: "Actions", i18n.German: "Aktionen"},
	"acct.pk.never":          {i18n.English: "never", i18n.German: "nie"},
	"acct.pk.none":           {i18n.English: "You have no passkey yet.", i18n.German: "Sie haben noch keinen Passkey."},
	"acct.pk.remove":         {i18n.English: "Remove “%s”", i18n.German: "„%s“ entfernen"},
	"acct.pk.remove.warn":    {i18n.English: "This passkey will no longer sign you in. Sign-ins made with it stay until they end; to end them too, sign out everywhere.", i18n.German: "Dieser Passkey meldet Sie dann nicht mehr an. Mit ihm begonnene Anmeldungen bleiben, bis sie enden; um auch sie zu beenden, melden Sie sich überall ab."},
	"acct.pk.remove.confirm": {i18n.English: "Remove the passkey now", i18n.German: "Passkey jetzt entfernen"},
	"acct.pk.newname":        {i18n.English: "Name of the new passkey", i18n.German: "Name des neuen Passkeys"},
	"acct.pk.newname.hint":   {i18n.English: "So you can tell it apart later, e.g. “Work laptop”. At most 64 characters.", i18n.German: "Damit Sie ihn später erkennen, z. B. „Dienst-Laptop“. Höchstens 64 Zeichen."},
	"acct.pk.add":            {i18n.English: "Add a passkey", i18n.German: "Passkey hinzufügen"},
	"acct.pk.added":          {i18n.English: "The passkey has been added. You can sign in with it from now on.", i18n.German: "Der Passkey wurde hinzugefügt. Sie können sich ab jetzt mit ihm anmelden."},
	"acct.pk.removed":        {i18n.English: "The passkey has been removed.", i18n.German: "Der Passkey wurde entfernt."},
	"acct.pk.refused":        {i18n.English: "The passkey was not added: %s", i18n.German: "Der Passkey wurde nicht hinzugefügt: %s"},
	"acct.pk.failed":         {i18n.English: "Adding the passkey was cancelled or is not possible here.", i18n.German: "Das Hinzufügen des Passkeys wurde abgebrochen oder ist hier nicht möglich."},
	"acct.pk.unsupported":    {i18n.English: "Adding a passkey needs a browser with passkey support and JavaScript.", i18n.German: "Zum Hinzufügen eines Passkeys braucht es einen Browser, der Passkeys unterstützt, und JavaScript."},
	"acct.pk.off":            {i18n.English: "Passkeys are not available on this server.", i18n.German: "Passkeys sind auf diesem Server nicht verfügbar."},
}

func init() {
	for k, v := range passkeyMessages {
		if _, dup := messages[k]; dup {
			panic("explorer: message " + k + " is in both catalogues")
		}
		messages[k] = v
	}
}
