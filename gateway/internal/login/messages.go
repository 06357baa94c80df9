package login

import "fris.dev/gateway/internal/i18n"

// messages are the page's texts, keyed by their English wording (the
// constants and literals of login.go).
var messages = i18n.Catalogue{
	"Sign in":                    {i18n.English: "Sign in", i18n.German: "Anmelden"},
	"to continue to":             {i18n.English: "to continue to", i18n.German: "weiter zu"},
	"Email address":              {i18n.English: "Email address", i18n.German: "E-Mail-Adresse"},
	"Password":                   {i18n.English: "Password", i18n.German: "Passwort"},
	"Language":                   {i18n.English: "Language", i18n.German: "Sprache"},
	"Signing in is not possible": {i18n.English: "Signing in is not possible", i18n.German: "Anmelden ist nicht möglich"},
	"Something went wrong":       {i18n.English: "Something went wrong", i18n.German: "Etwas ist schiefgegangen"},
	"Start signing in again":     {i18n.English: "Start signing in again", i18n.German: "Anmeldung neu beginnen"},
	"Go back to the application you came from and try again.": {
		i18n.English: "Go back to the application you came from and try again.",
		i18n.German:  "Gehen Sie zurück zur Anwendung, von der Sie kamen, und versuchen Sie es erneut.",
	},
	WrongCredentials: {i18n.English: WrongCredentials, i18n.German: "E-Mail-Adresse oder Passwort ist falsch."},
	MissingFields:    {i18n.English: MissingFields, i18n.German: "Geben Sie Ihre E-Mail-Adresse und Ihr Passwort ein."},
	NotUTF8:          {i18n.English: NotUTF8, i18n.German: "Das Formular enthält Text, der kein gültiges UTF-8 ist."},
	"Only response_type=code is supported.": {
		i18n.English: "Only response_type=code is supported.",
		i18n.German:  "Nur response_type=code wird unterstützt.",
	},
	"The sign-in form was sent from another site.": {
		i18n.English: "The sign-in form was sent from another site.",
		i18n.German:  "Das Anmeldeformular wurde von einer anderen Website gesendet.",
	},
	"The sign-in form must be sent as a form.": {
		i18n.English: "The sign-in form must be sent as a form.",
		i18n.German:  "Das Anmeldeformular muss als Formular gesendet werden.",
	},
	"The sign-in form is too large.": {
		i18n.English: "The sign-in form is too large.",
		i18n.German:  "Das Anmeldeformular ist zu groß.",
	},
	"The sign-in form could not be read.": {
		i18n.English: "The sign-in form could not be read.",
		i18n.German:  "Das Anmeldeformular konnte nicht gelesen werden.",
	},
	"This sign-in form has expired or was not sent from this page.": {
		i18n.English: "This sign-in form has expired or was not sent from this page.",
		i18n.German:  "Dieses Anmeldeformular ist abgelaufen oder wurde nicht von dieser Seite gesendet.",
	},
	"Signing in failed. Try again later.": {
		i18n.English: "Signing in failed. Try again later.",
		i18n.German:  "Die Anmeldung ist fehlgeschlagen. Versuchen Sie es später erneut.",
	},
	"Signing in is temporarily not possible. Try again later.": {
		i18n.English: "Signing in is temporarily not possible. Try again later.",
		i18n.German:  "Anmelden ist vorübergehend nicht möglich. Versuchen Sie es später erneut.",
	},
}
