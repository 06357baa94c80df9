package login

import "fris.dev/gateway/internal/i18n"

// The password policy's texts (password_policy.go), in the login page's
// catalogue.
func init() {
	for k, v := range map[string]map[i18n.Lang]string{
		RuleLength:      {i18n.English: RuleLength, i18n.German: "Mindestens %d Zeichen."},
		RuleCommonEmail: {i18n.English: RuleCommonEmail, i18n.German: "Keines der häufigsten Passwörter und nicht Ihre E-Mail-Adresse."},
		RuleEmail:       {i18n.English: RuleEmail, i18n.German: "Nicht Ihre E-Mail-Adresse."},
		TooShort:        {i18n.English: TooShort, i18n.German: "Ein Passwort braucht mindestens %d Zeichen."},
		CommonPassword:  {i18n.English: CommonPassword, i18n.German: "Dieses Passwort ist eines der häufigsten, die zuerst erraten werden. Wählen Sie ein anderes."},
		EmailPassword:   {i18n.English: EmailPassword, i18n.German: "Ein Passwort darf nicht Ihre E-Mail-Adresse oder deren Teil vor dem @ sein."},
	} {
		messages[k] = v
	}
}
