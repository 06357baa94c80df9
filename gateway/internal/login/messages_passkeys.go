package login

import "fris.dev/gateway/internal/i18n"

// The passkey sign-in's texts (passkey.go, static/passkey.js).
func init() {
	for k, v := range (i18n.Catalogue{
		"Sign in with a passkey": {i18n.English: "Sign in with a passkey", i18n.German: "Mit einem Passkey anmelden"},
		WrongPasskey:             {i18n.English: WrongPasskey, i18n.German: "Der Passkey wurde nicht angenommen."},
		"The passkey request has expired or was used: start again.": {
			i18n.English: "The passkey request has expired or was used: start again.",
			i18n.German:  "Die Passkey-Anfrage ist abgelaufen oder wurde schon benutzt: Beginnen Sie neu.",
		},
		"Signing in with a passkey was cancelled or is not possible here.": {
			i18n.English: "Signing in with a passkey was cancelled or is not possible here.",
			i18n.German:  "Die Anmeldung mit einem Passkey wurde abgebrochen oder ist hier nicht möglich.",
		},
	}) {
		if _, dup := messages[k]; dup {
			panic("login: message " + k + " is in two catalogues")
		}
		messages[k] = v
	}
}
