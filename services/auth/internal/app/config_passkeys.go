package app

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"strings"

	"fris.dev/pkg/cmdutil"
	"fris.dev/services/auth/internal/service"
)

// Passkeys is the WebAuthn relying party: by default the -issuer's host
// name and origin, the address people's browsers show on the login page.
type Passkeys struct {
	Passkeys       bool
	PasskeyRPID    string
	PasskeyOrigins string
}

// RegisterFlags adds the passkeys' flags to fs.
func (c *Passkeys) RegisterFlags(fs *flag.FlagSet) {
	fs.BoolVar(&c.Passkeys, "passkeys", true, "let users add passkeys (WebAuthn) on the account page and sign in with them; needs a domain name, not an IP address, in the public URL")
	fs.StringVar(&c.PasskeyRPID, "passkey-rp-id", "", "the domain passkeys are bound to (empty: the -issuer's host name); changing it makes every passkey stop working")
	fs.StringVar(&c.PasskeyOrigins, "passkey-origins", "", "comma-separated origins whose pages may use passkeys (empty: the -issuer's origin)")
}

// relyingParty is the passkeys' configuration for the service: zero when
// they are off, or when the public URL is an IP address and no domain was
// given (browsers refuse passkeys for addresses), except a loopback one,
// which stands for localhost.
func (c *Passkeys) relyingParty(issuer string) service.PasskeyConfig {
	if !c.Passkeys {
		return service.PasskeyConfig{}
	}
	rp := service.PasskeyDefaults(strings.TrimRight(issuer, "/"))
	if c.PasskeyRPID != "" {
		rp.RPID = c.PasskeyRPID
	} else if ip := net.ParseIP(rp.RPID); ip != nil {
		if !ip.IsLoopback() {
			return service.PasskeyConfig{}
		}
		// A developer's loopback deployment (make run): passkeys work
		// at http://localhost with its port, which browsers trust.
		u, _ := url.Parse(issuer)
		rp = service.PasskeyConfig{RPID: "localhost", Origins: []string{u.Scheme + "://" + net.JoinHostPort("localhost", u.Port())}}
		if u.Port() == "" {
			rp.Origins = []string{u.Scheme + "://localhost"}
		}
	}
	if o := cmdutil.SplitList(c.PasskeyOrigins); len(o) > 0 {
		rp.Origins = o
	}
	return rp
}

// validate reports the passkeys' mistakes, given the -issuer.
func (c *Passkeys) validate(issuer string) error {
	if !c.Passkeys {
		return nil
	}
	var errs []error
	if c.PasskeyRPID != "" && (net.ParseIP(c.PasskeyRPID) != nil || strings.ContainsAny(c.PasskeyRPID, ":/ ")) {
		errs = append(errs, fmt.Errorf("-passkey-rp-id %q must be a domain name", c.PasskeyRPID))
	}
	for _, o := range cmdutil.SplitList(c.PasskeyOrigins) {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" {
			errs = append(errs, fmt.Errorf("-passkey-origins: %q must be an origin (scheme://host[:port])", o))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if rp := c.relyingParty(issuer); rp.RPID != "" {
		if err := service.CheckPasskeys(rp); err != nil {
			return fmt.Errorf("passkeys: %w", err)
		}
	}
	return nil
}
