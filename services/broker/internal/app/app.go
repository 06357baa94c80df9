// Package app wires the search broker: config -> store -> mailer -> server.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/backup"
	"fris.dev/pkg/mtls"
	"fris.dev/pkg/ratelimit"
	"fris.dev/pkg/server"
	"fris.dev/pkg/throttles"
	brokerv1 "fris.dev/proto/broker/v1"
	"fris.dev/services/broker/internal/mailer"
	"fris.dev/services/broker/internal/service"
	"fris.dev/services/broker/internal/storage"
)

// Run serves the broker until ctx ends.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg.Store.Partitions = storage.Partitions
	// Readiness after a full disk waits until a bank's largest reply or
	// expose fits, not only a small write.
	cfg.Store.LargestWrite = int64(max(cfg.MaxReplyBytes, cfg.MaxExposeBytes))
	deps, err := cfg.Open(ctx, "broker", log)
	if err != nil {
		return err
	}
	defer deps.Close()
	db, auditLog := deps.Store, deps.Audit
	var m mailer.Mailer = mailer.Log{Log: log}
	if cfg.SMTPAddr != "" {
		m = mailer.SMTP{Addr: cfg.SMTPAddr, From: cfg.SMTPFrom, User: cfg.SMTPUser, Password: cfg.SMTPPassword, BrokerName: cfg.Name}
	} else if cfg.Registration == service.ModeActivationCode {
		log.Warn("activation-code registration without -smtp-addr: codes are written to this log for the operator")
	}
	reg := prometheus.NewRegistry()
	auditLog.RegisterMetrics(reg)
	limits := ratelimit.New(db, reg, log)
	auditLog.LimitRefusals(limits.AllowLog)
	svc := service.New(service.Config{
		Name: cfg.Name, Registration: cfg.Registration, ActivationTTL: cfg.ActivationTTL,
		MaxReplyBytes: cfg.MaxReplyBytes, MaxExposeBytes: cfg.MaxExposeBytes, MinCount: int32(cfg.MinCount),
		TokenCacheTTL: cfg.TokenCacheTTL, ListCacheTTL: cfg.ListCacheTTL, WatchInterval: cfg.WatchInterval, Done: ctx.Done(), PublicURL: cfg.PublicURL, Audit: auditLog,
		Guards: service.Guards{
			BankToken:      limits.Guard("bank_token", cfg.LimitBankToken, cfg.LimitAddr).WithCeiling(cfg.LimitCeiling),
			ActivationCode: limits.Guard("activation_code", cfg.LimitActivationCode, cfg.LimitAddr).WithCeiling(cfg.LimitCeiling),
			ActivationMail: limits.Guard("activation_mail", cfg.LimitMail, cfg.LimitMailAddr),
		},
	}, storage.New(db), m, log)
	if err := svc.MigrateSites(ctx); err != nil {
		return fmt.Errorf("site registry: adding the sites banks name: %w", err)
	}
	return server.Run(ctx, cfg.Server, server.Service{
		Name: "fris.broker.v1.BrokerService",
		Log:  log,
		Register: func(s *grpc.Server) {
			brokerv1.RegisterBrokerServiceServer(s, service.Public{Service: svc})
			brokerv1.RegisterResearcherServiceServer(s, service.Researcher{Service: svc})
			s.RegisterService(audit.AdminService(&brokerv1.BrokerAdmin_ServiceDesc, auditLog), service.Admin{Service: svc})
			backup.Register(s, "broker", db, auditLog, log)
			audit.Register(s, "broker", deps.Events, cfg.Settings(settingNames...), log)
			throttles.Register(s, "broker", limits, auditLog, log)
		},
		Ready:   svc.Ready,
		Metrics: reg,
		// Upload checks that a new credential's site is in the registry,
		// and puts the sites its credentials name into it at start
		// (docs/decisions.md, "The broker owns the site registry").
		Access: server.Access{
			brokerv1.BrokerAdmin_GetSite_FullMethodName:    {mtls.Admin, mtls.Upload},
			brokerv1.BrokerAdmin_CreateSite_FullMethodName: {mtls.Admin, mtls.Upload},
		},
		// The Explorer's operator views (docs/security.md): the banks, the
		// site registry they link to (read and edited: operators, who
		// approve the banks, name the sites) and the monitoring reports,
		// never the inquiries.
		Operator: slices.Concat([]string{
			brokerv1.BrokerAdmin_ListBanks_FullMethodName, brokerv1.BrokerAdmin_ApproveBank_FullMethodName,
			brokerv1.BrokerAdmin_LinkBankSite_FullMethodName, brokerv1.BrokerAdmin_DeleteBank_FullMethodName,
			brokerv1.BrokerAdmin_ListMonitoring_FullMethodName, brokerv1.BrokerAdmin_ListSites_FullMethodName,
			brokerv1.BrokerAdmin_GetSite_FullMethodName, brokerv1.BrokerAdmin_CreateSite_FullMethodName,
			brokerv1.BrokerAdmin_UpdateSite_FullMethodName,
		}, audit.OperatorMethods, throttles.OperatorMethods), // the audit, settings and throttles views (pkg/audit, pkg/throttles) too
	})
}
