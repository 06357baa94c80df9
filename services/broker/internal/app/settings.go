package app

// settingNames are the flags the Explorer's settings view shows of the
// broker, besides the ones every service shows (server.Base.Settings):
// bank sign-up, sizes and abuse limits. Never a secret:
// audit.FlagSettings refuses any flag that may hold one.
var settingNames = []string{
	"name", "public-url", "registration", "activation-ttl", "smtp-addr",
	"max-reply-bytes", "max-expose-bytes", "min-count",
	"limit-bank-token", "limit-activation-code", "limit-account-ceiling", "limit-addr", "limit-mail", "limit-mail-addr",
}
