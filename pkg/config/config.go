// Package config parses flags with environment fallbacks: every flag -x-y can
// also be set as <PREFIX>_X_Y (flags win over the environment).
package config

import (
	"flag"
	"fmt"

	"github.com/peterbourgon/ff/v3"
)

// Parse parses args into fs, filling unset flags from the environment.
func Parse(fs *flag.FlagSet, args []string, envPrefix string) error {
	if err := ff.Parse(fs, args, ff.WithEnvVarPrefix(envPrefix)); err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	return nil
}
