package app

import (
	"errors"
	"flag"
	"fmt"

	"fris.dev/services/auth/internal/pwpolicy"
)

// Passwords is the password policy of every new password (pwpolicy,
// docs/security.md "Password policy"); passwords set before keep working.
type Passwords struct {
	PasswordMinLength  int
	PasswordCommonList bool
}

// RegisterFlags adds the password policy's flags to fs.
func (c *Passwords) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.PasswordMinLength, "password-min-length", pwpolicy.DefaultMinLength, "least length of a new password, in characters (passwords set before keep working)")
	fs.BoolVar(&c.PasswordCommonList, "password-common-list", true, "refuse the 100,000 most common passwords as new passwords (the list is in the binary)")
}

// Validate reports the policy's mistakes.
func (c *Passwords) Validate() error {
	if c.PasswordMinLength < 1 || c.PasswordMinLength > pwpolicy.MaxMinLength {
		return fmt.Errorf("-password-min-length must be 1 to %d", pwpolicy.MaxMinLength)
	}
	return nil
}

// policy builds the policy, reading the common list once.
func (c *Passwords) policy() (*pwpolicy.Policy, error) {
	p, err := pwpolicy.New(c.PasswordMinLength, c.PasswordCommonList)
	if err != nil {
		return nil, errors.Join(errors.New("-password-min-length, -password-common-list"), err)
	}
	return p, nil
}
