// Command fris-certs makes a deployment's own CA and the certificates its
// components present to each other over mutual TLS: `make run` runs it for
// .fris/tls. The gateway image runs the same as `gateway certs`.
package main

import (
	"context"
	"os"

	"fris.dev/gateway/internal/certscmd"
	"fris.dev/pkg/cmdutil"
)

func main() {
	cmdutil.Main("fris-certs", func(_ context.Context, args []string) error {
		return certscmd.Run(args, os.Stdout, os.Stderr)
	})
}
