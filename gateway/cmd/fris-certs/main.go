// Command fris-certs makes a deployment's own CA and the certificates its
// components present to each other over mutual TLS (docs/security.md,
// "Service-to-service trust"): `make run` runs it for .fris/tls, docker
// compose's certs service for its volume. Only missing files are made (and
// certificates within 30 days of expiry made again), so it can run on
// every start.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"fris.dev/pkg/cmdutil"
	"fris.dev/pkg/devca"
	"fris.dev/pkg/mtls"
)

func main() {
	cmdutil.Main("fris-certs", func(_ context.Context, args []string) error {
		return run(args, os.Stdout, os.Stderr)
	})
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fris-certs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", mtls.DefaultDir(), "directory of the CA and the certificates (created, mode 0700)")
	names := fs.String("names", strings.Join(devca.Names, ","), "comma-separated components to make a certificate for (its common name, the name the services authorise)")
	hosts := fs.String("hosts", "", "comma-separated extra DNS names or IPs every certificate is valid for (beyond localhost, 127.0.0.1, ::1, the name and its Kubernetes names in namespace fris)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return fmt.Errorf("%w: %w", cmdutil.ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", cmdutil.ErrUsage, fs.Arg(0))
	}
	wrote, err := devca.Ensure(*dir, split(*names), devca.Options{Hosts: split(*hosts)})
	if err != nil {
		return err
	}
	for _, f := range wrote {
		fmt.Fprintln(stdout, "wrote", f)
	}
	return nil
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
