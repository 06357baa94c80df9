// Command auth is the FRIS identity provider: `auth serve` runs it; the
// other subcommands manage clients, users and signing keys.
package main

import (
	"context"
	"os"

	"fris.dev/pkg/cmdutil"
	"fris.dev/services/auth/internal/cli"
)

func main() {
	cmdutil.Main("auth", func(ctx context.Context, args []string) error {
		return cli.Run(ctx, args, os.Stdout, os.Stderr)
	})
}
