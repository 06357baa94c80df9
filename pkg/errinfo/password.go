package errinfo

// The password policy's refusals (InvalidArgument), one reason per rule,
// so a page says in its own language which rule a new password broke; the
// status message says it in English for the CLI.
const (
	// PasswordTooShort: fewer characters than the policy's least length,
	// which the auth service's GetPasswordPolicy tells.
	PasswordTooShort = "PASSWORD_TOO_SHORT"
	// PasswordCommon: one of the most common passwords.
	PasswordCommon = "PASSWORD_COMMON"
	// PasswordIsEmail: the account's email address or its local part.
	PasswordIsEmail = "PASSWORD_IS_EMAIL"
)
