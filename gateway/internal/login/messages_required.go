package login

import "fris.dev/gateway/internal/i18n"

// The required actions' texts (required_action.go).
func init() {
	for k, v := range (i18n.Catalogue{
		ChangeRequired:   {i18n.English: ChangeRequired, i18n.German: "Ihre Administration verlangt ein neues Passwort, bevor Sie fortfahren."},
		VerifyRequired:   {i18n.English: VerifyRequired, i18n.German: "Ihre Administration verlangt, dass Sie Ihre E-Mail-Adresse bestätigen, bevor Sie fortfahren. Wir haben Ihnen einen Link geschickt: Folgen Sie ihm und melden Sie sich dann erneut an."},
		ChangeTitle:      {i18n.English: ChangeTitle, i18n.German: "Neues Passwort wählen"},
		SameAsOldRefused: {i18n.English: SameAsOldRefused, i18n.German: "Wählen Sie ein anderes als das bisherige Passwort."},
	}) {
		if _, dup := messages[k]; dup {
			panic("login: message " + k + " is in two catalogues")
		}
		messages[k] = v
	}
}
