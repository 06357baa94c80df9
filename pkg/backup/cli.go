package backup

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
	"google.golang.org/grpc"

	"fris.dev/pkg/cmdutil"
	"fris.dev/pkg/kv"
	backupv1 "fris.dev/proto/backup/v1"
)

// backupTimeout is the backup's default -timeout: a store of gigabytes
// takes minutes to copy over a network.
const backupTimeout = time.Hour

// Commands are the `backup` and `restore` subcommands of t's binary, whose
// service stores its data under t.Name (kv.Open). They print what they
// wrote to stdout.
func Commands(t cmdutil.Tool, stdout io.Writer) (backup, restore *ffcli.Command) {
	const backupUsage = "backup -out FILE [-force]"
	var out string
	var force bool
	backup = t.Command(cmdutil.Admin{
		Name: "backup", Usage: backupUsage, Timeout: backupTimeout,
		Help: "copy the running service's embedded store to FILE, consistently, while it serves (the copy holds secrets: keep it so)",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&out, "out", "", "the file to write (required); FILE.tmp while it is written")
			fs.BoolVar(&force, "force", false, "replace FILE when it exists")
		},
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			if out == "" || len(args) > 0 {
				return fmt.Errorf("%w: %s %s", cmdutil.ErrUsage, t.Name, backupUsage)
			}
			res, err := Fetch(ctx, backupv1.NewBackupAdminClient(cc), out, force)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s\t%d bytes\tsha256 %x\t%s at transaction %d\n", res.Path, res.Size, res.SHA256, res.FileName, res.Transaction)
			return nil
		},
	})

	const restoreUsage = "restore [-data-dir DIR] [-force] FILE"
	var dataDir string
	var rForce bool
	restore = t.Local(cmdutil.Local{
		Name: "restore", Usage: restoreUsage,
		Help: "with the service stopped: check that FILE (a backup) is a whole store and put it in place as the service's store in DIR",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&dataDir, "data-dir", kv.DefaultDataDir, "the stopped service's -data-dir")
			fs.BoolVar(&rForce, "force", false, "replace the store in DIR when there is one")
		},
		Run: func(_ context.Context, args []string) error {
			from, err := t.One(args, restoreUsage)
			if err != nil {
				return err
			}
			res, err := Restore(dataDir, t.Name, from, rForce)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s\t%d bytes\tsha256 %x\trestored from %s\n", res.Path, res.Size, res.SHA256, from)
			return nil
		},
	})
	return backup, restore
}
