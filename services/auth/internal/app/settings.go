package app

// settingNames are the flags the Explorer's settings view shows of auth,
// besides the ones every service shows (server.Base.Settings): token
// lifetimes, sign-up, self-service links, abuse limits and the password
// policy. Never a secret: audit.FlagSettings refuses any flag that may hold
// one.
var settingNames = []string{
	"issuer", "access-ttl", "id-ttl", "refresh-ttl", "skew", "code-ttl", "sign-request-ttl",
	"key-alg", "key-bits", "key-rotation",
	"registration", "register-scopes", "default-scopes", "min-key-bits",
	"reset-ttl", "verify-ttl", "smtp-addr",
	"limit-login", "limit-client-secret", "limit-signature", "limit-addr", "limit-account-ceiling",
	"limit-register", "limit-reset", "limit-reset-addr", "limit-reset-ceiling",
	"secret-cache-ttl",
	"password-min-length", "password-common-list", "require-2fa-for",
}
