package explorer

import "fris.dev/gateway/internal/i18n"

// passwordMessages are the password policy's texts on the account page
// (password_policy.go).
var passwordMessages = i18n.Catalogue{
	"acct.pw.rule.length": {i18n.English: "At least %d characters.", i18n.German: "Mindestens %d Zeichen."},
	"acct.pw.rule.common": {i18n.English: "Not one of the most common passwords, and not your email address.", i18n.German: "Keines der häufigsten Passwörter und nicht Ihre E-Mail-Adresse."},
	"acct.pw.rule.email":  {i18n.English: "Not your email address.", i18n.German: "Nicht Ihre E-Mail-Adresse."},
	"acct.pw.short":       {i18n.English: "The new password needs at least %d characters.", i18n.German: "Das neue Passwort braucht mindestens %d Zeichen."},
	"acct.pw.common":      {i18n.English: "The new password is one of the most common ones, which are guessed first. Choose another.", i18n.German: "Das neue Passwort ist eines der häufigsten, die zuerst erraten werden. Wählen Sie ein anderes."},
	"acct.pw.isemail":     {i18n.English: "The new password must not be your email address or its part before the @.", i18n.German: "Das neue Passwort darf nicht Ihre E-Mail-Adresse oder deren Teil vor dem @ sein."},
}

func init() {
	for k, v := range passwordMessages {
		if _, dup := messages[k]; dup {
			panic("explorer: message " + k + " is in both catalogues")
		}
		messages[k] = v
	}
}
