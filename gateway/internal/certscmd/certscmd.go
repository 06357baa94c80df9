// Package certscmd is the command that makes a deployment's own CA and the
// certificates its components present to each other over mutual TLS
// (docs/security.md, "Service-to-service trust"). Two binaries run it:
// fris-certs (for `make run`) and `gateway certs` (the gateway image's, for
// docker compose's certs service, so that the image carries one binary).
// Only missing files are made (and certificates within 30 days of expiry
// made again), so it can run on every start.
package certscmd

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"fris.dev/pkg/cmdutil"
	"fris.dev/pkg/devca"
	"fris.dev/pkg/mtls"
)

// Run makes the CA and the certificates args ask for into -dir, printing
// each file it wrote.
func Run(args []string, stdout, stderr io.Writer) error {
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
