package app

// settingNames are the flags the Explorer's settings view shows of the
// upload service, besides the ones every service shows
// (server.Base.Settings): validation, document bounds and abuse limits.
// Never a secret: audit.FlagSettings refuses any flag that may hold one.
var settingNames = []string{
	"validation", "registry-timeout", "max-document-bytes", "max-depth", "max-parse-bytes",
	"limit-basic", "limit-account-ceiling", "limit-addr", "secret-cache-ttl",
}
