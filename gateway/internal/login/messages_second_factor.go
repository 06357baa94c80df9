package login

import "fris.dev/gateway/internal/i18n"

// The second step's texts (second_factor.go).
func init() {
	for k, v := range (i18n.Catalogue{
		WrongSecondFactor:     {i18n.English: WrongSecondFactor, i18n.German: "Der Code ist falsch. Geben Sie den aktuellen Code Ihrer Authenticator-App oder einen Ihrer Wiederherstellungscodes ein."},
		PendingExpired:        {i18n.English: PendingExpired, i18n.German: "Die Anmeldung ist abgelaufen. Melden Sie sich erneut mit Ihrem Passwort an."},
		MissingCode:           {i18n.English: MissingCode, i18n.German: "Geben Sie den Code Ihrer Authenticator-App ein."},
		"Two-step sign-in":    {i18n.English: "Two-step sign-in", i18n.German: "Anmeldung in zwei Schritten"},
		"Add a second factor": {i18n.English: "Add a second factor", i18n.German: "Zweiten Faktor hinzufügen"},
		"Your account requires a second factor (by its role or your administrator's request). Add this key to an authenticator app (for example by its link or by typing the key), then enter the code it shows.": {
			i18n.English: "Your account requires a second factor (by its role or your administrator's request). Add this key to an authenticator app (for example by its link or by typing the key), then enter the code it shows.",
			i18n.German:  "Ihr Konto verlangt einen zweiten Faktor (durch seine Rolle oder auf Wunsch Ihrer Administration). Fügen Sie diesen Schlüssel einer Authenticator-App hinzu (etwa über den Link oder durch Eintippen) und geben Sie dann den angezeigten Code ein.",
		},
		"Open in an authenticator app":     {i18n.English: "Open in an authenticator app", i18n.German: "In einer Authenticator-App öffnen"},
		"Key":                              {i18n.English: "Key", i18n.German: "Schlüssel"},
		"Code from your authenticator app": {i18n.English: "Code from your authenticator app", i18n.German: "Code aus Ihrer Authenticator-App"},
		"Six digits.":                      {i18n.English: "Six digits.", i18n.German: "Sechs Ziffern."},
		"Six digits, or one of your recovery codes.": {i18n.English: "Six digits, or one of your recovery codes.", i18n.German: "Sechs Ziffern oder einer Ihrer Wiederherstellungscodes."},
		// The auth service's refusal of a password for an account whose
		// role requires a second factor and that has a passkey.
		"Your role requires a second factor: sign in with your passkey.": {
			i18n.English: "Your role requires a second factor: sign in with your passkey.",
			i18n.German:  "Ihre Rolle verlangt einen zweiten Faktor: Melden Sie sich mit Ihrem Passkey an.",
		},
		"Continue":                 {i18n.English: "Continue", i18n.German: "Weiter"},
		"Save your recovery codes": {i18n.English: "Save your recovery codes", i18n.German: "Wiederherstellungscodes sichern"},
		"Your second factor is set up. Each recovery code signs you in once if you lose your authenticator app. They are shown only now: write them down or store them safely.": {
			i18n.English: "Your second factor is set up. Each recovery code signs you in once if you lose your authenticator app. They are shown only now: write them down or store them safely.",
			i18n.German:  "Ihr zweiter Faktor ist eingerichtet. Jeder Wiederherstellungscode meldet Sie einmal an, falls Sie Ihre Authenticator-App verlieren. Sie werden nur jetzt angezeigt: Notieren Sie sie oder bewahren Sie sie sicher auf.",
		},
		"I have saved them: continue": {i18n.English: "I have saved them: continue", i18n.German: "Ich habe sie gesichert: weiter"},
	}) {
		if _, dup := messages[k]; dup {
			panic("login: message " + k + " is in two catalogues")
		}
		messages[k] = v
	}
}
