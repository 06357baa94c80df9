// Command mdr is the FRIS metadata registry: `mdr serve` runs the service;
// `mdr import` (-if-empty for seeding), `mdr namespaces` and `mdr delete-namespace` administer it.
package main

import (
	"context"
	"os"

	"fris.dev/pkg/cmdutil"
	"fris.dev/services/mdr/internal/cli"
)

func main() {
	cmdutil.Main("mdr", func(ctx context.Context, args []string) error {
		return cli.Run(ctx, args, os.Stdin, os.Stdout, os.Stderr)
	})
}
