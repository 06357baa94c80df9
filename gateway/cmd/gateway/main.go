// Command gateway is FRIS's HTTP front: it serves the documented REST/XML
// paths and forwards them to the services over gRPC. Its flags configure the
// server; two words before them run a tool of the gateway image instead:
// `gateway probe URL` (the container healthcheck) and `gateway certs`
// (fris-certs, for docker compose's certs service).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"fris.dev/gateway/internal/app"
	"fris.dev/gateway/internal/certscmd"
	"fris.dev/pkg/cmdutil"
	"fris.dev/pkg/config"
	"fris.dev/pkg/logging"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "probe":
			cmdutil.Main("gateway probe", func(ctx context.Context, args []string) error {
				return cmdutil.Probe(ctx, args[1:])
			})
			return
		case "certs":
			cmdutil.Main("gateway certs", func(_ context.Context, args []string) error {
				return certscmd.Run(args[1:], os.Stdout, os.Stderr)
			})
			return
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var cfg app.Config
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := config.Parse(fs, os.Args[1:], "FRIS_GATEWAY"); err != nil {
		if errors.Is(err, flag.ErrHelp) { // asked for: the usage is printed
			os.Exit(0)
		}
		os.Exit(2)
	}
	log, err := logging.New(os.Stderr, cfg.LogLevel, "gateway")
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(2)
	}
	if err := app.Run(ctx, cfg, log); err != nil {
		log.Error("gateway failed", "err", err)
		os.Exit(1)
	}
}
