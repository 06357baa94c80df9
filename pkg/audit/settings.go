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

// secretish are name parts of flags that hold a secret, name a file that
// holds one, or may carry one (a Redis URL's password): FlagSettings
// refuses them whatever a service lists.
var secretish = []string{"secret", "password", "key-file", "cookie-key", "tls-", "redis-url", "token-file"}

// Secretish reports whether the flag name may hold a secret.
func Secretish(name string) bool {
	for _, s := range secretish {
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
