package explorer

import "fris.dev/gateway/internal/i18n"

// accountMessages are the account page's texts (account.go), added to the
// catalogue at start like the operator views'.
var accountMessages = i18n.Catalogue{
	"nav.myaccount":         {i18n.English: "Your account", i18n.German: "Ihr Konto"},
	"acct.title":            {i18n.English: "Your account", i18n.German: "Ihr Konto"},
	"acct.name":             {i18n.English: "Name", i18n.German: "Name"},
	"acct.email":            {i18n.English: "Email address", i18n.German: "E-Mail-Adresse"},
	"acct.pw.title":         {i18n.English: "Change password", i18n.German: "Passwort ändern"},
	"acct.pw.intro":         {i18n.English: "A new password signs you out everywhere else: other browsers and applications sign in again.", i18n.German: "Ein neues Passwort meldet Sie überall sonst ab: andere Browser und Anwendungen melden sich neu an."},
	"acct.pw.current":       {i18n.English: "Current password", i18n.German: "Aktuelles Passwort"},
	"acct.pw.new":           {i18n.English: "New password", i18n.German: "Neues Passwort"},
	"acct.pw.new2":          {i18n.English: "New password again", i18n.German: "Neues Passwort wiederholen"},
	"acct.pw.submit":        {i18n.English: "Change password", i18n.German: "Passwort ändern"},
	"acct.pw.done":          {i18n.English: "Your password has been changed. You have been signed out everywhere else.", i18n.German: "Ihr Passwort wurde geändert. Sie wurden überall sonst abgemeldet."},
	"acct.pw.missing":       {i18n.English: "Enter your current password and the new one twice.", i18n.German: "Geben Sie Ihr aktuelles Passwort und das neue zweimal ein."},
	"acct.pw.differ":        {i18n.English: "The two new passwords differ.", i18n.German: "Die beiden neuen Passwörter sind verschieden."},
	"acct.pw.wrong":         {i18n.English: "The current password is wrong.", i18n.German: "Das aktuelle Passwort ist falsch."},
	"acct.pw.refused":       {i18n.English: "The new password was refused: %s", i18n.German: "Das neue Passwort wurde abgelehnt: %s"},
	"acct.profile":          {i18n.English: "Profile", i18n.German: "Profil"},
	"acct.profile.who":      {i18n.English: "An operator keeps these details.", i18n.German: "Diese Angaben pflegt ein Betreiber."},
	"acct.contact":          {i18n.English: "Contact", i18n.German: "Kontakt"},
	"acct.locality":         {i18n.English: "Locality", i18n.German: "Standort"},
	"acct.none":             {i18n.English: "none", i18n.German: "keine Angabe"},
	"acct.verified":         {i18n.English: "confirmed", i18n.German: "bestätigt"},
	"acct.unverified":       {i18n.English: "not confirmed yet", i18n.German: "noch nicht bestätigt"},
	"acct.sessions":         {i18n.English: "Where you are signed in", i18n.German: "Wo Sie angemeldet sind"},
	"acct.sessions.caption": {i18n.English: "Sign-ins that are still valid, newest first.", i18n.German: "Noch gültige Anmeldungen, die neueste zuerst."},
	"acct.sessions.app":     {i18n.English: "Application", i18n.German: "Anwendung"},
	"acct.sessions.since":   {i18n.English: "Signed in", i18n.German: "Angemeldet"},
	"acct.sessions.from":    {i18n.English: "From address", i18n.German: "Von Adresse"},
	"acct.sessions.this":    {i18n.English: "this browser", i18n.German: "dieser Browser"},
	"acct.sessions.none":    {i18n.English: "No sign-in to show.", i18n.German: "Keine Anmeldung anzuzeigen."},
	"acct.signout.all":      {i18n.English: "Sign out everywhere", i18n.German: "Überall abmelden"},
	"acct.signout.warn":     {i18n.English: "Every sign-in of your account ends, this one too: every browser and application must sign in again.", i18n.German: "Jede Anmeldung Ihres Kontos endet, auch diese: Jeder Browser und jede Anwendung muss sich neu anmelden."},
	"acct.signout.confirm":  {i18n.English: "Sign out everywhere now", i18n.German: "Jetzt überall abmelden"},
}

func init() {
	for k, v := range accountMessages {
		if _, dup := messages[k]; dup {
			panic("explorer: message " + k + " is in both catalogues")
		}
		messages[k] = v
	}
}
