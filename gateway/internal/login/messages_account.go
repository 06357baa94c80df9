package login

import "fris.dev/gateway/internal/i18n"

// The self-service pages' texts (account.go and its templates), in the
// login page's catalogue.
func init() {
	for k, v := range map[string]map[i18n.Lang]string{
		"Forgot your password?": {i18n.English: "Forgot your password?", i18n.German: "Passwort vergessen?"},
		"Enter the email address of your account. If there is an account with it, we send a link that sets a new password.": {
			i18n.English: "Enter the email address of your account. If there is an account with it, we send a link that sets a new password.",
			i18n.German:  "Geben Sie die E-Mail-Adresse Ihres Kontos ein. Gibt es ein Konto mit ihr, senden wir einen Link, mit dem Sie ein neues Passwort setzen.",
		},
		"Send link":                           {i18n.English: "Send link", i18n.German: "Link senden"},
		"Back to sign in":                     {i18n.English: "Back to sign in", i18n.German: "Zurück zur Anmeldung"},
		"Check your mail":                     {i18n.English: "Check your mail", i18n.German: "Sehen Sie in Ihr Postfach"},
		"Set a new password":                  {i18n.English: "Set a new password", i18n.German: "Neues Passwort setzen"},
		"for the account":                     {i18n.English: "for the account", i18n.German: "für das Konto"},
		"New password":                        {i18n.English: "New password", i18n.German: "Neues Passwort"},
		"New password again":                  {i18n.English: "New password again", i18n.German: "Neues Passwort wiederholen"},
		"Set password":                        {i18n.English: "Set password", i18n.German: "Passwort setzen"},
		"Password changed":                    {i18n.English: "Password changed", i18n.German: "Passwort geändert"},
		"This link cannot be used":            {i18n.English: "This link cannot be used", i18n.German: "Dieser Link ist nicht mehr gültig"},
		"Ask for a new link":                  {i18n.English: "Ask for a new link", i18n.German: "Neuen Link anfordern"},
		"Confirm your email address":          {i18n.English: "Confirm your email address", i18n.German: "E-Mail-Adresse bestätigen"},
		"Confirm that this address is yours:": {i18n.English: "Confirm that this address is yours:", i18n.German: "Bestätigen Sie, dass diese Adresse Ihnen gehört:"},
		"Confirm":                             {i18n.English: "Confirm", i18n.German: "Bestätigen"},
		"Email address confirmed":             {i18n.English: "Email address confirmed", i18n.German: "E-Mail-Adresse bestätigt"},
		EmailVerified:                         {i18n.English: EmailVerified, i18n.German: "Ihre E-Mail-Adresse ist bestätigt. Vielen Dank."},
		CredentialsRemoved: {i18n.English: CredentialsRemoved,
			i18n.German: "Niemand hatte diese Anmeldewege Ihres Kontos bestätigt. Sie wurden entfernt, und jede mit ihnen begonnene Anmeldung ist beendet:"},
		"key":            {i18n.English: "Key", i18n.German: "Schlüssel"},
		"passkey":        {i18n.English: "Passkey", i18n.German: "Passkey"},
		"added":          {i18n.English: "added", i18n.German: "hinzugefügt"},
		"registration":   {i18n.English: "registered without sign-in", i18n.German: "ohne Anmeldung registriert"},
		"holder":         {i18n.English: "added by the signed-in holder", i18n.German: "vom angemeldeten Inhaber hinzugefügt"},
		"operator":       {i18n.English: "added by an operator", i18n.German: "von einem Betreiber hinzugefügt"},
		MissingEmail:     {i18n.English: MissingEmail, i18n.German: "Geben Sie Ihre E-Mail-Adresse ein."},
		InvalidEmail:     {i18n.English: InvalidEmail, i18n.German: "Geben Sie eine gültige E-Mail-Adresse ein."},
		MissingPasswords: {i18n.English: MissingPasswords, i18n.German: "Geben Sie das neue Passwort zweimal ein."},
		PasswordsDiffer:  {i18n.English: PasswordsDiffer, i18n.German: "Die beiden Passwörter sind verschieden."},
		DeadLink:         {i18n.English: DeadLink, i18n.German: "Dieser Link ist abgelaufen oder wurde schon benutzt."},
		LinkSent:         {i18n.English: LinkSent, i18n.German: "Hat ein Konto diese Adresse, haben wir ihm einen Link gesendet, mit dem Sie ein neues Passwort setzen. Der Link gilt einmal und nur kurze Zeit."},
		PasswordSet: {i18n.English: PasswordSet,
			i18n.German: "Ihr Passwort wurde geändert, und Sie wurden überall abgemeldet. Melden Sie sich mit dem neuen Passwort an."},
	} {
		messages[k] = v
	}
}
