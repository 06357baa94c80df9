package app

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"fris.dev/services/auth/internal/pwpolicy"
)

// Passwords is the password policy of every new password (pwpolicy,
// docs/security.md "Password policy"); passwords set before keep working.
type Passwords struct {
	PasswordMinLength  int
	PasswordCommonList bool
	// RequireSecondFactor: the roles whose holders sign in with a second
	// factor (TOTP or a passkey).
	RequireSecondFactor string
}

// RegisterFlags adds the password policy's flags to fs.
func (c *Passwords) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.PasswordMinLength, "password-min-length", pwpolicy.DefaultMinLength, "least length of a new password, in characters (passwords set before keep working)")
	fs.BoolVar(&c.PasswordCommonList, "password-common-list", true, "refuse the 100,000 most common passwords as new passwords (the list is in the binary)")
	fs.StringVar(&c.RequireSecondFactor, "require-2fa-for", "", "comma-separated roles (scopes, e.g. fris:operator) whose holders sign in with a second factor: TOTP after the password, or a passkey; one without is led to enrol TOTP")
}

// Validate reports the policy's mistakes.
func (c *Passwords) Validate() error {
	if c.PasswordMinLength < 1 || c.PasswordMinLength > pwpolicy.MaxMinLength {
		return fmt.Errorf("-password-min-length must be 1 to %d", pwpolicy.MaxMinLength)
	}
	for _, r := range c.requiredRoles() {
		if len(r) > 128 || strings.ContainsAny(r, " \t") {
			return fmt.Errorf("-require-2fa-for: %q is not a role", r)
		}
	}
	return nil
}

// requiredRoles are the roles of -require-2fa-for.
func (c *Passwords) requiredRoles() []string {
	var out []string
	for _, r := range strings.Split(c.RequireSecondFactor, ",") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// policy builds the policy, reading the common list once.
func (c *Passwords) policy() (*pwpolicy.Policy, error) {
	p, err := pwpolicy.New(c.PasswordMinLength, c.PasswordCommonList)
	if err != nil {
		return nil, errors.Join(errors.New("-password-min-length, -password-common-list"), err)
	}
	return p, nil
}
