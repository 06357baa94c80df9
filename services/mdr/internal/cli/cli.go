// Package cli is the mdr command: `serve` runs the service, the other
// subcommands are operator tools talking to a running service's admin API.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/peterbourgon/ff/v3"
	"github.com/peterbourgon/ff/v3/ffcli"

	"fris.dev/pkg/logging"
	"fris.dev/pkg/rpcclient"
	mdrv1 "fris.dev/proto/mdr/v1"
	"fris.dev/services/mdr/internal/app"
	"fris.dev/services/mdr/internal/importer"
)

const envPrefix = "FRIS_MDR"

// Run executes the command line args (without the program name).
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var cfg app.Config
	serveFS := flag.NewFlagSet("mdr serve", flag.ContinueOnError)
	cfg.RegisterFlags(serveFS)
	serve := &ffcli.Command{
		Name: "serve", ShortUsage: "mdr serve [flags]", ShortHelp: "run the metadata registry service",
		FlagSet: serveFS, Options: []ff.Option{ff.WithEnvVarPrefix(envPrefix)},
		Exec: func(ctx context.Context, _ []string) error {
			log, err := logging.New(stderr, cfg.LogLevel, "mdr")
			if err != nil {
				return err
			}
			return app.Run(ctx, cfg, log)
		},
	}

	adminFS := func(name string) (*flag.FlagSet, *string, *time.Duration) {
		fs := flag.NewFlagSet("mdr "+name, flag.ContinueOnError)
		addr := fs.String("addr", "127.0.0.1:9102", "gRPC address of the running mdr service")
		timeout := fs.Duration("timeout", 2*time.Minute, "how long the call may take")
		return fs, addr, timeout
	}
	admin := func(addr string, timeout time.Duration, fn func(context.Context, mdrv1.MdrAdminClient) error) error {
		cc, err := rpcclient.Dial(addr)
		if err != nil {
			return err
		}
		defer cc.Close()
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return fn(ctx, mdrv1.NewMdrAdminClient(cc))
	}

	impFS, impAddr, impTimeout := adminFS("import")
	imp := &ffcli.Command{
		Name: "import", ShortUsage: "mdr import [flags] FILE", FlagSet: impFS,
		ShortHelp: "import a Samply MDR XML export or a FRIS JSON registry (- reads stdin); all or nothing",
		Options:   []ff.Option{ff.WithEnvVarPrefix(envPrefix)},
		Exec: func(ctx context.Context, args []string) error {
			if len(args) != 1 {
				return errors.New("usage: mdr import [flags] FILE")
			}
			reg, err := readRegistry(args[0], stdin)
			if err != nil {
				return err
			}
			return admin(*impAddr, *impTimeout, func(ctx context.Context, c mdrv1.MdrAdminClient) error {
				res, err := c.Import(ctx, &mdrv1.ImportRequest{Registry: reg})
				if err != nil {
					return fmt.Errorf("import %s: %w", args[0], err)
				}
				fmt.Fprintf(stdout, "imported %d namespace(s), %d element(s); registry generation %d\n", res.GetNamespaces(), res.GetElements(), res.GetGeneration())
				return nil
			})
		},
	}

	lsFS, lsAddr, lsTimeout := adminFS("namespaces")
	ls := &ffcli.Command{
		Name: "namespaces", ShortUsage: "mdr namespaces [flags]", FlagSet: lsFS,
		ShortHelp: "list every namespace, private ones included",
		Options:   []ff.Option{ff.WithEnvVarPrefix(envPrefix)},
		Exec: func(ctx context.Context, _ []string) error {
			return admin(*lsAddr, *lsTimeout, func(ctx context.Context, c mdrv1.MdrAdminClient) error {
				res, err := c.ListNamespaces(ctx, &mdrv1.AdminListNamespacesRequest{})
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tPRIVATE\tELEMENTS\tROOT MEMBERS")
				for _, n := range res.GetNamespaces() {
					fmt.Fprintf(tw, "%s\t%t\t%d\t%d\n", n.GetName(), n.GetPrivate(), n.GetElements(), n.GetMembers())
				}
				return tw.Flush()
			})
		},
	}

	delFS, delAddr, delTimeout := adminFS("delete-namespace")
	del := &ffcli.Command{
		Name: "delete-namespace", ShortUsage: "mdr delete-namespace [flags] NAME", FlagSet: delFS,
		ShortHelp: "delete a namespace and its elements (refused while other namespaces use them)",
		Options:   []ff.Option{ff.WithEnvVarPrefix(envPrefix)},
		Exec: func(ctx context.Context, args []string) error {
			if len(args) != 1 {
				return errors.New("usage: mdr delete-namespace [flags] NAME")
			}
			return admin(*delAddr, *delTimeout, func(ctx context.Context, c mdrv1.MdrAdminClient) error {
				if _, err := c.DeleteNamespace(ctx, &mdrv1.DeleteNamespaceRequest{Name: args[0]}); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "deleted namespace %s\n", args[0])
				return nil
			})
		},
	}

	root := &ffcli.Command{
		Name: "mdr", ShortUsage: "mdr <serve|import|namespaces|delete-namespace> [flags]",
		FlagSet:     flag.NewFlagSet("mdr", flag.ContinueOnError),
		Subcommands: []*ffcli.Command{serve, imp, ls, del},
		Exec:        func(context.Context, []string) error { return flag.ErrHelp },
	}
	for _, c := range append(root.Subcommands, root) {
		c.FlagSet.SetOutput(stderr)
	}
	return root.ParseAndRun(ctx, args)
}

func readRegistry(path string, stdin io.Reader) (*mdrv1.Registry, error) {
	var r io.Reader = stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	reg, err := importer.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return reg, nil
}
