package explorer

import "fris.dev/gateway/internal/i18n"

// totpMessages are the texts of the account page's second factor
// (totp.go, templates/account-totp.html, its row among the credentials).
var totpMessages = i18n.Catalogue{
	"acct.totp.title":       {i18n.English: "Second factor", i18n.German: "Zweiter Faktor"},
	"acct.totp.intro":       {i18n.English: "With an authenticator app, signing in with your password also asks for the six-digit code the app shows. A passkey counts as two factors on its own.", i18n.German: "Mit einer Authenticator-App verlangt die Anmeldung mit Ihrem Passwort zusätzlich den sechsstelligen Code, den die App anzeigt. Ein Passkey zählt allein schon als zwei Faktoren."},
	"acct.totp.pw":          {i18n.English: "Your password", i18n.German: "Ihr Passwort"},
	"acct.totp.pw.hint":     {i18n.English: "Asked so that a browser left signed in cannot add a factor that locks you out.", i18n.German: "Damit ein angemeldet gelassener Browser keinen Faktor hinzufügen kann, der Sie aussperrt."},
	"acct.totp.pw.wrong":    {i18n.English: "The password is wrong.", i18n.German: "Das Passwort ist falsch."},
	"acct.totp.begin":       {i18n.English: "Add an authenticator app", i18n.German: "Authenticator-App hinzufügen"},
	"acct.totp.step1":       {i18n.English: "Add this key to your authenticator app:", i18n.German: "Fügen Sie diesen Schlüssel Ihrer Authenticator-App hinzu:"},
	"acct.totp.link":        {i18n.English: "open it in the app", i18n.German: "in der App öffnen"},
	"acct.totp.key":         {i18n.English: "or type the key", i18n.German: "oder tippen Sie den Schlüssel ein"},
	"acct.totp.step2":       {i18n.English: "Enter the code the app shows now.", i18n.German: "Geben Sie den Code ein, den die App jetzt anzeigt."},
	"acct.totp.code":        {i18n.English: "Code from the app", i18n.German: "Code aus der App"},
	"acct.totp.confirm":     {i18n.English: "Confirm and turn on", i18n.German: "Bestätigen und einschalten"},
	"acct.totp.added":       {i18n.English: "Your authenticator app is now your second factor.", i18n.German: "Ihre Authenticator-App ist jetzt Ihr zweiter Faktor."},
	"acct.totp.codes":       {i18n.English: "Recovery codes: each signs you in once if you lose the app. They are shown only now: write them down or store them safely.", i18n.German: "Wiederherstellungscodes: Jeder meldet Sie einmal an, falls Sie die App verlieren. Sie werden nur jetzt angezeigt: Notieren Sie sie oder bewahren Sie sie sicher auf."},
	"acct.totp.has":         {i18n.English: "Your account has an authenticator app: it is listed under Ways to sign in, where you can remove it.", i18n.German: "Ihr Konto hat eine Authenticator-App: Sie steht unter Anmeldewege, wo Sie sie entfernen können."},
	"acct.totp.already":     {i18n.English: "Your account already has an authenticator app: remove it first.", i18n.German: "Ihr Konto hat schon eine Authenticator-App: Entfernen Sie sie zuerst."},
	"acct.totp.missing":     {i18n.English: "Enter the code the app shows.", i18n.German: "Geben Sie den Code ein, den die App anzeigt."},
	"acct.totp.wrong":       {i18n.English: "The code is wrong, or the key has expired: check the app's clock, or start again.", i18n.German: "Der Code ist falsch oder der Schlüssel abgelaufen: Prüfen Sie die Uhr der App oder beginnen Sie neu."},
	"acct.cred.kind.totp":   {i18n.English: "Authenticator app (second factor)", i18n.German: "Authenticator-App (zweiter Faktor)"},
	"acct.cred.proof":       {i18n.English: "A current code from the app, or your password", i18n.German: "Ein aktueller Code aus der App oder Ihr Passwort"},
	"acct.cred.proof.wrong": {i18n.English: "The code or password is wrong: the second factor was not removed.", i18n.German: "Der Code oder das Passwort ist falsch: Der zweite Faktor wurde nicht entfernt."},
}

func init() {
	for k, v := range totpMessages {
		if _, dup := messages[k]; dup {
			panic("explorer: message " + k + " is in both catalogues")
		}
		messages[k] = v
	}
}
