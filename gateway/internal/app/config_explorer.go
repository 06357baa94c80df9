package app

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"fris.dev/gateway/internal/explorer"
)

// Explorer is the FRIS Explorer's configuration (docs/decisions.md,
// "Explorer"): without an OAuth client id and secret its sign-in says it
// is not configured.
type Explorer struct {
	ExplorerClientID         string
	ExplorerClientSecretFile string
	ExplorerURL              string
	ExplorerSessions         int
	// ExplorerCookieKeyFile holds the keys that seal the Explorer's
	// sign-in cookies (empty: a random key of this process).
	ExplorerCookieKeyFile string
	// ExplorerStaleAfter: the operators' sites view highlights teilers
	// that have not uploaded for longer.
	ExplorerStaleAfter time.Duration
	// ExplorerShareStreams: the results streams of an inquiry share one
	// broker watch and rendering (off only to measure what it saves).
	ExplorerShareStreams bool
}

// RegisterFlags adds the Explorer's flags to fs.
func (c *Explorer) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.ExplorerClientID, "explorer-client-id", "", "the FRIS Explorer's OAuth client id at the auth service (empty: the Explorer's sign-in is not configured)")
	fs.StringVar(&c.ExplorerClientSecretFile, "explorer-client-secret-file", "", "file holding the Explorer's client secret")
	fs.StringVar(&c.ExplorerURL, "explorer-url", "", "the gateway's origin as browsers reach it, e.g. https://fris.example.org, for the Explorer's redirect URI <url>/explorer/callback (empty: each request's own Host)")
	fs.IntVar(&c.ExplorerSessions, "explorer-sessions", 10000, "most signed-in Explorer sessions kept in memory; beyond, the least recently used goes (visitors who have not signed in take none)")
	fs.StringVar(&c.ExplorerCookieKeyFile, "explorer-cookie-key-file", "", "file of the keys that seal the Explorer's sign-in cookies: base64 of 32 random bytes each (head -c 32 /dev/urandom | base64), one a line, the first seals, all open (rotation); give every gateway replica the same file so a sign-in may finish on any (empty: a random key per process, a sign-in must finish on the replica that began it)")
	c.ExplorerStaleAfter = explorer.DefaultStaleAfter
	fs.BoolVar(&c.ExplorerShareStreams, "explorer-share-streams", true, "the Explorer's results streams of one inquiry (and user and language) share one broker watch and one rendering per update; false gives each stream its own, as before, for a benchmark's baseline")
	fs.Var(ageFlag{&c.ExplorerStaleAfter}, "explorer-stale-after", "the Explorer's sites view highlights a teiler without an upload for longer than this: days (7d) or a Go duration (36h)")
}

// Validate reports the Explorer's mistakes.
func (c *Explorer) Validate() error {
	var errs []error
	if (c.ExplorerClientID == "") != (c.ExplorerClientSecretFile == "") {
		errs = append(errs, errors.New("-explorer-client-id and -explorer-client-secret-file go together"))
	}
	if c.ExplorerURL != "" {
		if u, err := url.Parse(c.ExplorerURL); err != nil || !httpURL(c.ExplorerURL) || strings.TrimRight(u.Path, "/") != "" || u.RawQuery != "" {
			errs = append(errs, fmt.Errorf("-explorer-url %q must be an http(s) origin, without a path", c.ExplorerURL))
		}
	}
	if c.ExplorerSessions < 1 {
		errs = append(errs, errors.New("-explorer-sessions must be positive"))
	}
	return errors.Join(errs...)
}

// ageFlag is -explorer-stale-after: whole days read as such ("7d", the
// default -h shows), anything else as a Go duration.
type ageFlag struct{ d *time.Duration }

func (f ageFlag) String() string {
	switch {
	case f.d == nil:
		return ""
	case *f.d > 0 && *f.d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", *f.d/(24*time.Hour))
	}
	return f.d.String()
}

func (f ageFlag) Set(s string) error {
	d, err := explorer.ParseAge(s)
	if err == nil {
		*f.d = d
	}
	return err
}
