// Command upload is the FRIS central upload: `upload serve` runs the
// service; the other subcommands manage site credentials and read stored
// patients.
package main

import (
	"context"
	"os"

	"fris.dev/pkg/cmdutil"
	"fris.dev/services/upload/internal/cli"
)

func main() {
	cmdutil.Main("upload", func(ctx context.Context, args []string) error {
		return cli.Run(ctx, args, os.Stdout, os.Stderr)
	})
}
