// Package cli is the mdr command: `serve` runs the service, the other
// subcommands are operator tools talking to a running service's admin API.
package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"google.golang.org/grpc"

	"fris.dev/pkg/backup"
	"fris.dev/pkg/cmdutil"
	mdrv1 "fris.dev/proto/mdr/v1"
	"fris.dev/services/mdr/internal/app"
	"fris.dev/services/mdr/internal/importer"
)

// Run executes the command line args (without the program name).
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	t := cmdutil.Tool{Name: "mdr", EnvPrefix: "FRIS_MDR", DefaultAddr: "127.0.0.1:9102", Stderr: stderr}
	var cfg app.Config
	serve := t.Serve("run the metadata registry service", &cfg, func(ctx context.Context, log *slog.Logger) error { return app.Run(ctx, cfg, log) })
	admin := func(cc *grpc.ClientConn) mdrv1.MdrAdminClient { return mdrv1.NewMdrAdminClient(cc) }

	var ifEmpty bool
	imp := t.Command(cmdutil.Admin{
		Name: "import", Usage: "import [flags] FILE",
		Help: "import a Samply MDR XML export or a FRIS JSON registry (- reads stdin); all or nothing",
		Flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&ifEmpty, "if-empty", false, "import only into a registry without namespaces (seeding demo data over an operator's registry would change it)")
		},
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			path, err := t.One(args, "import [flags] FILE")
			if err != nil {
				return err
			}
			reg, err := readRegistry(path, stdin)
			if err != nil {
				return err
			}
			if ifEmpty {
				ls, err := admin(cc).ListNamespaces(ctx, &mdrv1.AdminListNamespacesRequest{})
				if err != nil {
					return err
				}
				if n := len(ls.GetNamespaces()); n > 0 {
					fmt.Fprintf(stdout, "not importing %s: the registry already has %d namespace(s)\n", path, n)
					return nil
				}
			}
			res, err := admin(cc).Import(ctx, &mdrv1.ImportRequest{Registry: reg})
			if err != nil {
				return fmt.Errorf("import %s: %w", path, err)
			}
			fmt.Fprintf(stdout, "imported %d namespace(s), %d element(s); registry generation %d\n", res.GetNamespaces(), res.GetElements(), res.GetGeneration())
			return nil
		},
	})
	ls := t.Command(cmdutil.Admin{
		Name: "namespaces", Usage: "namespaces [flags]", Help: "list every namespace, private ones included",
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			res, err := admin(cc).ListNamespaces(ctx, &mdrv1.AdminListNamespacesRequest{})
			if err != nil {
				return err
			}
			tw := cmdutil.Table(stdout, "NAME\tPRIVATE\tELEMENTS\tROOT MEMBERS")
			for _, n := range res.GetNamespaces() {
				fmt.Fprintf(tw, "%s\t%t\t%d\t%d\n", n.GetName(), n.GetPrivate(), n.GetElements(), n.GetMembers())
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			changed := "unknown"
			if c := res.GetLastChange(); c != nil {
				changed = c.AsTime().UTC().Format(time.RFC3339)
			}
			_, err = fmt.Fprintf(stdout, "\nregistry version %d, last changed %s\n", res.GetGeneration(), changed)
			return err
		},
	})
	del := t.Command(cmdutil.Admin{
		Name: "delete-namespace", Usage: "delete-namespace [flags] NAME",
		Help: "delete a namespace and its elements (refused while other namespaces use them)",
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			name, err := t.One(args, "delete-namespace [flags] NAME")
			if err != nil {
				return err
			}
			if _, err := admin(cc).DeleteNamespace(ctx, &mdrv1.DeleteNamespaceRequest{Name: name}); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "deleted namespace %s\n", name)
			return nil
		},
	})
	// Every service's store is copied and put back the same way.
	bk, rs := backup.Commands(t, stdout)
	return t.Root(serve, imp, ls, del, bk, rs).ParseAndRun(ctx, args)
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
