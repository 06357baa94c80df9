// Package cli is the upload command: `serve` runs the central upload, the
// other subcommands manage the sites' credentials and read stored patients
// through its admin API.
package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	"fris.dev/pkg/backup"
	"fris.dev/pkg/cmdutil"
	"fris.dev/pkg/throttles"
	uploadv1 "fris.dev/proto/upload/v1"
	"fris.dev/services/upload/internal/app"
)

// Run executes the command line args (without the program name).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	t := cmdutil.Tool{Name: "upload", EnvPrefix: "FRIS_UPLOAD", DefaultAddr: "127.0.0.1:9103", Stderr: stderr}
	var cfg app.Config
	serve := t.Serve("run the central upload", &cfg, func(ctx context.Context, log *slog.Logger) error { return app.Run(ctx, cfg, log) })
	admin := func(cc *grpc.ClientConn) uploadv1.UploadAdminClient { return uploadv1.NewUploadAdminClient(cc) }
	// teilerFlags are -site and -teiler, both required.
	type teilerFlags struct{ site, teiler string }
	addTeiler := func(fs *flag.FlagSet, tf *teilerFlags) {
		fs.StringVar(&tf.site, "site", "", "the site id (required)")
		fs.StringVar(&tf.teiler, "teiler", "", "the teiler id of the site (required)")
	}
	pbTeiler := func(tf teilerFlags, usage string) (*uploadv1.Teiler, error) {
		if tf.site == "" || tf.teiler == "" {
			return nil, fmt.Errorf("%w: upload %s (-site and -teiler are required)", cmdutil.ErrUsage, usage)
		}
		return &uploadv1.Teiler{SiteId: tf.site, TeilerId: tf.teiler}, nil
	}

	var ct teilerFlags
	var cPass string
	var cIfMissing bool
	const createUsage = "create-credential -site S -teiler T [-password P] [-if-missing] USERNAME"
	create := t.Command(cmdutil.Admin{
		Name: "create-credential", Usage: createUsage,
		Help: "let USERNAME upload for one site's teiler; prints the password (generated unless -password), shown only now",
		Flags: func(fs *flag.FlagSet) {
			addTeiler(fs, &ct)
			fs.StringVar(&cPass, "password", "", "the password (at least 12 characters; prefer FRIS_UPLOAD_PASSWORD; empty: generated)")
			fs.BoolVar(&cIfMissing, "if-missing", false, "succeed without change when USERNAME exists for the same teiler")
		},
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			user, err := t.One(args, createUsage)
			if err != nil {
				return err
			}
			tl, err := pbTeiler(ct, createUsage)
			if err != nil {
				return err
			}
			res, err := admin(cc).CreateCredential(ctx, &uploadv1.CreateCredentialRequest{Username: user, Teiler: tl, Password: cPass, IfMissing: cIfMissing})
			if err != nil {
				return err
			}
			if res.GetExisted() {
				fmt.Fprintf(stdout, "%s\texists\n", user)
				return nil
			}
			fmt.Fprintf(stdout, "%s\t%s\n", user, res.GetPassword())
			return nil
		},
	})
	var sPass string
	setPassword := t.Command(cmdutil.Admin{
		Name: "set-password", Usage: "set-password [-password P] USERNAME", Help: "replace a credential's password; prints it",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&sPass, "password", "", "the new password (empty: generated)")
		},
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			user, err := t.One(args, "set-password [-password P] USERNAME")
			if err != nil {
				return err
			}
			res, err := admin(cc).SetCredentialPassword(ctx, &uploadv1.SetCredentialPasswordRequest{Username: user, Password: sPass})
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s\t%s\n", user, res.GetPassword())
			return nil
		},
	})
	toggle := func(name, help string, disabled bool) *ffcli.Command {
		return t.Command(cmdutil.Admin{
			Name: name, Usage: name + " USERNAME", Help: help,
			Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
				user, err := t.One(args, name+" USERNAME")
				if err != nil {
					return err
				}
				_, err = admin(cc).SetCredentialDisabled(ctx, &uploadv1.SetCredentialDisabledRequest{Username: user, Disabled: disabled})
				return err
			},
		})
	}
	credentials := t.Command(cmdutil.Admin{
		Name: "credentials", Usage: "credentials", Help: "list every credential with its site and teiler",
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			res, err := admin(cc).ListCredentials(ctx, &uploadv1.ListCredentialsRequest{})
			if err != nil {
				return err
			}
			tw := cmdutil.Table(stdout, "USERNAME\tSITE\tTEILER\tSTATUS\tCREATED")
			for _, c := range res.GetCredentials() {
				st := "active"
				if c.GetDisabled() {
					st = "disabled"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.GetUsername(), c.GetTeiler().GetSiteId(), c.GetTeiler().GetTeilerId(), st, c.GetCreated().AsTime().Format(time.RFC3339))
			}
			return tw.Flush()
		},
	})

	var lt teilerFlags
	var lPrefix string
	var lLimit int
	const listUsage = "patients -site S -teiler T [-prefix P] [-limit N]"
	patients := t.Command(cmdutil.Admin{
		Name: "patients", Usage: listUsage, Help: "list a teiler's stored patients in id order",
		Flags: func(fs *flag.FlagSet) {
			addTeiler(fs, &lt)
			fs.StringVar(&lPrefix, "prefix", "", "only ids starting with this")
			fs.IntVar(&lLimit, "limit", 0, "at most this many (0: all)")
		},
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			tl, err := pbTeiler(lt, listUsage)
			if err != nil {
				return err
			}
			tw := cmdutil.Table(stdout, "PATIENT\tSTORED\tBYTES\tCASES\tSAMPLES\tATTRIBUTES\tCONTAINERS\tREFS")
			tok, n := "", 0
			for {
				res, err := admin(cc).ListPatients(ctx, &uploadv1.ListPatientsRequest{Teiler: tl, Prefix: lPrefix, PageToken: tok})
				if err != nil {
					return err
				}
				for _, p := range res.GetPatients() {
					if lLimit > 0 && n >= lLimit {
						return tw.Flush()
					}
					n++
					fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", p.GetPatientId(), p.GetStored().AsTime().UTC().Format(time.RFC3339), p.GetSizeBytes(), p.GetCases(), p.GetSamples(), p.GetAttributes(), p.GetContainers(), p.GetRefs())
				}
				if tok = res.GetNextPageToken(); tok == "" {
					return tw.Flush()
				}
			}
		},
	})
	var nt teilerFlags
	const countUsage = "count -site S -teiler T"
	count := t.Command(cmdutil.Admin{
		Name: "count", Usage: countUsage, Help: "print how many patients a teiler stored",
		Flags: func(fs *flag.FlagSet) { addTeiler(fs, &nt) },
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			tl, err := pbTeiler(nt, countUsage)
			if err != nil {
				return err
			}
			res, err := admin(cc).CountPatients(ctx, &uploadv1.CountPatientsRequest{Teiler: tl})
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, res.GetCount())
			return nil
		},
	})
	teilers := t.Command(cmdutil.Admin{
		Name: "teilers", Usage: "teilers", Help: "every teiler with a credential: patients, last upload statistics, newest patient stored",
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			res, err := admin(cc).ListTeilers(ctx, &uploadv1.ListTeilersRequest{})
			if err != nil {
				return err
			}
			at := func(ts *timestamppb.Timestamp) string {
				if ts == nil {
					return "never"
				}
				return ts.AsTime().UTC().Format(time.RFC3339)
			}
			tw := cmdutil.Table(stdout, "SITE\tTEILER\tPATIENTS\tLAST UPLOAD\tLAST STORED\tCREDENTIALS")
			for _, x := range res.GetTeilers() {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%d (%d disabled)\n", x.GetTeiler().GetSiteId(), x.GetTeiler().GetTeilerId(), x.GetPatients(),
					at(x.GetLastUpload()), at(x.GetLastStored()), x.GetCredentials(), x.GetDisabled())
			}
			return tw.Flush()
		},
	})
	var gt teilerFlags
	const getUsage = "patient -site S -teiler T PATIENT_ID"
	get := t.Command(cmdutil.Admin{
		Name: "patient", Usage: getUsage, Help: "write a stored patient document to stdout, byte for byte as uploaded",
		Flags: func(fs *flag.FlagSet) { addTeiler(fs, &gt) },
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			id, err := t.One(args, getUsage)
			if err != nil {
				return err
			}
			tl, err := pbTeiler(gt, getUsage)
			if err != nil {
				return err
			}
			res, err := admin(cc).GetPatient(ctx, &uploadv1.GetPatientRequest{Teiler: tl, PatientId: id})
			if err != nil {
				return err
			}
			_, err = stdout.Write(res.GetDocument())
			return err
		},
	})

	// Every service's store is copied and put back the same way.
	bk, rs := backup.Commands(t, stdout)
	thr, lift := throttles.Commands(t, stdout)
	return t.Root(serve, create, setPassword, toggle("disable", "stop a credential from working", true),
		toggle("enable", "let a disabled credential work again", false), credentials, teilers, patients, count, get, bk, rs, thr, lift).ParseAndRun(ctx, args)
}
