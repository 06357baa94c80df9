// Package app wires the registry service: config -> store -> server.
package app

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/backup"
	"fris.dev/pkg/mtls"
	"fris.dev/pkg/server"
	mdrv1 "fris.dev/proto/mdr/v1"
	"fris.dev/services/mdr/internal/service"
	"fris.dev/services/mdr/internal/storage"
)

// Config is everything `mdr serve` reads from flags and FRIS_MDR_* variables.
type Config struct {
	server.Base
	Refresh time.Duration
}

// RegisterFlags adds the serve flags to fs.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	c.Base.RegisterFlags(fs, "127.0.0.1:9102", "127.0.0.1:9202")
	fs.DurationVar(&c.Refresh, "refresh", time.Second, "how often the read index checks the store for imports made through other replicas")
}

// Validate reports every configuration mistake at once.
func (c *Config) Validate() error {
	errs := []error{c.Base.Validate()}
	if c.Refresh <= 0 {
		errs = append(errs, errors.New("-refresh must be positive"))
	}
	return errors.Join(errs...)
}

// Run serves the registry until ctx ends.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	deps, err := cfg.Open(ctx, "mdr", log)
	if err != nil {
		return err
	}
	defer deps.Close()
	db, auditLog := deps.Store, deps.Audit
	svc, err := service.New(ctx, storage.New(db), log, cfg.Refresh)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	auditLog.RegisterMetrics(reg)
	return server.Run(ctx, cfg.Server, server.Service{
		Name: "fris.mdr.v1.MdrService",
		Log:  log,
		Register: func(s *grpc.Server) {
			mdrv1.RegisterMdrServiceServer(s, service.Public{Service: svc})
			s.RegisterService(audit.AdminService(&mdrv1.MdrAdmin_ServiceDesc, auditLog), service.Admin{Service: svc})
			backup.Register(s, "mdr", db, auditLog, log)
			audit.Register(s, "mdr", deps.Events, cfg.Settings(settingNames...), log)
		},
		Ready:   svc.Ready,
		Metrics: reg,
		// The upload checks patients' values against the registry, the
		// Explorer a query's. A method's own entry replaces its service's
		// (the longest prefix decides), so the gateway is named again.
		Access: server.Access{mdrv1.MdrService_CheckValues_FullMethodName: {mtls.Gateway, mtls.Upload}},
		// The Explorer's registry status, for operators (docs/security.md).
		// The audit and settings views (pkg/audit) too.
		Operator: append([]string{mdrv1.MdrAdmin_ListNamespaces_FullMethodName}, audit.OperatorMethods...),
	})
}
