// Package cmdutil is the shape every FRIS service binary shares: a `serve`
// subcommand and operator subcommands that call the running service's admin
// API over gRPC, all configured by flags with FRIS_<SVC>_* fallbacks.
package cmdutil

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/peterbourgon/ff/v3"
	"github.com/peterbourgon/ff/v3/ffcli"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"

	"fris.dev/pkg/logging"
	"fris.dev/pkg/mtls"
	"fris.dev/pkg/probe"
	"fris.dev/pkg/rpcclient"
)

// Admin describes one operator subcommand.
type Admin struct {
	Name, Usage, Help string
	// Flags adds the subcommand's own flags.
	Flags func(fs *flag.FlagSet)
	// Run does the work over a connection to the service.
	Run func(ctx context.Context, cc *grpc.ClientConn, args []string) error
	// Timeout is -timeout's default (zero: 2 minutes).
	Timeout time.Duration
}

// Local describes a subcommand that works without the running service
// (on its files, while it is stopped).
type Local struct {
	Name, Usage, Help string
	Flags             func(fs *flag.FlagSet)
	Run               func(ctx context.Context, args []string) error
}

// Tool builds a binary's command tree.
type Tool struct {
	Name        string // binary name, e.g. "mdr"
	EnvPrefix   string // e.g. "FRIS_MDR"
	DefaultAddr string // the service's default gRPC address
	Stderr      io.Writer
}

// Command makes an ffcli command for an operator subcommand: flags -addr and
// -timeout, then a connection, then a.Run.
func (t Tool) Command(a Admin) *ffcli.Command {
	fs := flag.NewFlagSet(t.Name+" "+a.Name, flag.ContinueOnError)
	fs.SetOutput(t.Stderr)
	addr := fs.String("addr", t.DefaultAddr, "gRPC address of the running "+t.Name+" service")
	timeout := fs.Duration("timeout", cmp.Or(a.Timeout, 2*time.Minute), "how long the call may take")
	// Seeds start together with their service (docker compose, a pod), and
	// ordering by healthchecks is not available everywhere: they wait for
	// the service instead of failing at once; an operator's typo of -addr
	// still fails at once without it.
	wait := fs.Bool("wait", false, "wait (up to -timeout) for the service to be reachable instead of failing at once")
	// The operator's own certificate: the admin API admits only "admin".
	// After `make run` the development CA's admin certificate is the default.
	var tlsCfg mtls.Config
	tlsCfg.RegisterFlags(fs, mtls.Dev(mtls.DefaultDir(), mtls.Admin))
	if a.Flags != nil {
		a.Flags(fs)
	}
	return &ffcli.Command{
		Name: a.Name, ShortUsage: t.Name + " " + a.Usage, ShortHelp: a.Help, FlagSet: fs,
		Options: []ff.Option{ff.WithEnvVarPrefix(t.EnvPrefix)},
		Exec: func(ctx context.Context, args []string) error {
			if err := tlsCfg.Validate(); err != nil {
				return fmt.Errorf("%w: %w", ErrUsage, err)
			}
			transport, err := tlsCfg.DialOption()
			if err != nil {
				return err
			}
			opts := []grpc.DialOption{transport}
			if *wait {
				opts = append(opts, grpc.WithDefaultCallOptions(grpc.WaitForReady(true)))
			}
			cc, err := rpcclient.Dial(*addr, opts...)
			if err != nil {
				return err
			}
			defer cc.Close()
			ctx, cancel := context.WithTimeout(ctx, *timeout)
			defer cancel()
			err = a.Run(ctx, cc, args)
			// A service that answered leaves the connection Ready; its own
			// Unavailable (a dependency down) must not read as "not reachable".
			return t.explain(err, *addr, cc.GetState() == connectivity.Ready)
		},
	}
}

// Local makes an ffcli command for a subcommand that works without the
// service: its flags (with the binary's environment fallbacks), then
// l.Run.
func (t Tool) Local(l Local) *ffcli.Command {
	fs := flag.NewFlagSet(t.Name+" "+l.Name, flag.ContinueOnError)
	fs.SetOutput(t.Stderr)
	if l.Flags != nil {
		l.Flags(fs)
	}
	return &ffcli.Command{
		Name: l.Name, ShortUsage: t.Name + " " + l.Usage, ShortHelp: l.Help, FlagSet: fs,
		Options: []ff.Option{ff.WithEnvVarPrefix(t.EnvPrefix)},
		Exec:    l.Run,
	}
}

// ServeConfig is a service's serve configuration: it adds its flags, and
// after parsing says the log level they set (server.Base does the latter).
type ServeConfig interface {
	RegisterFlags(fs *flag.FlagSet)
	Level() string
}

// Serve makes the `serve` subcommand: cfg's flags under "<name> serve", then
// run with a logger at cfg's level.
func (t Tool) Serve(help string, cfg ServeConfig, run func(ctx context.Context, log *slog.Logger) error) *ffcli.Command {
	fs := flag.NewFlagSet(t.Name+" serve", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	fs.SetOutput(t.Stderr)
	return &ffcli.Command{
		Name: "serve", ShortUsage: t.Name + " serve [flags]", ShortHelp: help, FlagSet: fs,
		Options: []ff.Option{ff.WithEnvVarPrefix(t.EnvPrefix)},
		Exec: func(ctx context.Context, _ []string) error {
			log, err := logging.New(t.Stderr, cfg.Level(), t.Name)
			if err != nil {
				return err
			}
			return run(ctx, log)
		},
	}
}

// One is the single argument an operator subcommand takes (an id, an
// email); any other count is a usage error quoting usage.
func (t Tool) One(args []string, usage string) (string, error) {
	if len(args) != 1 {
		return "", fmt.Errorf("%w: %s %s", ErrUsage, t.Name, usage)
	}
	return args[0], nil
}

// Table starts an operator listing: columns aligned by tabs, header its
// first line (tab-separated names). The caller writes the rows and flushes.
func Table(w io.Writer, header string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	return tw
}

// SplitList splits a comma-separated flag value, dropping blanks.
func SplitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// Root makes the top command over the subcommands, and `probe`.
func (t Tool) Root(subs ...*ffcli.Command) *ffcli.Command {
	subs = append(subs, t.probe())
	fs := flag.NewFlagSet(t.Name, flag.ContinueOnError)
	fs.SetOutput(t.Stderr)
	names := ""
	for i, s := range subs {
		if i > 0 {
			names += "|"
		}
		names += s.Name
	}
	return &ffcli.Command{
		Name: t.Name, ShortUsage: t.Name + " <" + names + "> [flags]", FlagSet: fs, Subcommands: subs,
		Exec: func(_ context.Context, args []string) error {
			if len(args) > 0 {
				return usageError("unknown subcommand " + args[0])
			}
			return usageError("a subcommand is needed")
		},
	}
}

// probe is `<binary> probe URL`, the container healthcheck.
func (t Tool) probe() *ffcli.Command {
	fs := flag.NewFlagSet(t.Name+" probe", flag.ContinueOnError)
	fs.SetOutput(t.Stderr)
	return &ffcli.Command{
		Name: "probe", ShortUsage: t.Name + " probe URL",
		ShortHelp: "exit 0 when GET URL answers 200 (the container healthcheck), else 1",
		FlagSet:   fs,
		Exec:      Probe,
	}
}

// Probe checks the one URL in args (package probe): the runtime image has
// no shell or curl, so every binary is its own healthcheck.
func Probe(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("%w: probe URL", ErrUsage)
	}
	return probe.Check(ctx, args[0])
}

// usageError is a command line without a subcommand: ffcli prints the usage
// for it (it is a flag.ErrHelp), and it exits 2 (it is an ErrUsage), unlike
// an asked-for -h.
type usageError string

func (e usageError) Error() string { return string(e) }
func (e usageError) Is(target error) bool {
	return target == flag.ErrHelp || target == ErrUsage
}

// ErrUsage marks a command line the subcommand cannot use; it exits 2.
var ErrUsage = errors.New("usage")

// Main runs run with a context that ends on SIGINT or SIGTERM and exits
// with ExitCode, printing the error when there is one to print.
func Main(name string, run func(ctx context.Context, args []string) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	code, msg := ExitCode(err)
	if msg != "" {
		fmt.Fprintln(os.Stderr, name+":", msg)
	}
	if code != 0 {
		os.Exit(code)
	}
}

// ExitCode is how a command ends after err: 0 on success and on an asked-for
// -h (the usage is already printed), 2 on a usage error, 1 otherwise; msg is
// what to print, if anything.
func ExitCode(err error) (code int, msg string) {
	switch {
	case err == nil:
		return 0, ""
	case errors.Is(err, ErrUsage):
		return 2, err.Error()
	case errors.Is(err, flag.ErrHelp):
		return 0, ""
	default:
		return 1, err.Error()
	}
}
