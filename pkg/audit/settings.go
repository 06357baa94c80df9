package audit

import (
	"flag"
	"fmt"
	"strings"
)

// Setting is one value a service runs with that an operator may read
// (AuditAdmin.GetSettings, the Explorer's settings view).
type Setting struct {
	Name, Value, Description string
}

// Flags that hold a secret (-key-secrets, -smtp-password), name a file
// that holds one (every -*-file: -key-secret-file, -explorer-cookie-key-file),
// or may carry one (TLS material, a Redis URL's password): FlagSettings
// refuses them whatever a service lists. -limit-client-secret and
// -secret-cache-ttl are limits, not secrets.
var (
	secretSuffixes = []string{"secret", "secrets", "password", "-file"}
	secretParts    = []string{"tls-", "redis-url"}
)

// Secretish reports whether the flag name may hold a secret.
func Secretish(name string) bool {
	if strings.HasPrefix(name, "limit-") {
		return false // an abuse limit's policy, N/PERIOD
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	for _, s := range secretParts {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}

// FlagSettings are the named flags of fs, with the values they were set to
// and their help, in the order named. A name fs lacks, or one Secretish
// refuses, is a programming error: it panics, so every service's tests
// catch it.
func FlagSettings(fs *flag.FlagSet, names ...string) []Setting {
	out := make([]Setting, 0, len(names))
	for _, n := range names {
		if Secretish(n) {
			panic(fmt.Sprintf("audit: flag -%s may hold a secret and is no setting to show", n))
		}
		f := fs.Lookup(n)
		if f == nil {
			panic(fmt.Sprintf("audit: no flag -%s", n))
		}
		out = append(out, Setting{Name: n, Value: f.Value.String(), Description: f.Usage})
	}
	return out
}
