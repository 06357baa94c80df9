// Command broker is the FRIS search broker: `broker serve` runs the
// service; the other subcommands manage banks and inquiries.
package main

import (
	"context"
	"os"

	"fris.dev/pkg/cmdutil"
	"fris.dev/services/broker/internal/cli"
)

func main() {
	cmdutil.Main("broker", func(ctx context.Context, args []string) error {
		return cli.Run(ctx, args, os.Stdout, os.Stderr)
	})
}
