package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/kv"
	"fris.dev/pkg/telemetry"
)

// Base is the part of a service's serve configuration every service has:
// its listening side, its store, its audit log and its log level. A
// service's Config embeds it and adds its own flags.
type Base struct {
	Server   Config
	Store    kv.Config
	Audit    audit.Config
	LogLevel string
	// flags is the set RegisterFlags added to, with the service's own
	// flags: what Settings reads once it is parsed.
	flags *flag.FlagSet
}

// RegisterFlags adds the shared serve flags, with the service's default
// gRPC and operations addresses.
func (b *Base) RegisterFlags(fs *flag.FlagSet, grpcAddr, opsAddr string) {
	b.flags = fs
	b.Server.RegisterFlags(fs, grpcAddr, opsAddr)
	b.Store.RegisterFlags(fs)
	b.Audit.RegisterFlags(fs)
	fs.StringVar(&b.LogLevel, "log-level", "info", "debug, info, warn or error")
}

// Level is the -log-level the flags set (cmdutil makes the logger from it).
func (b *Base) Level() string { return b.LogLevel }

// commonSettings are the shared flags every service's settings show.
var commonSettings = []string{"store", "max-recv-bytes", "audit-keep", "audit-keep-for"}

// Settings are the shared settings and the service's named flags, as
// parsed, for AuditAdmin.GetSettings (audit.FlagSettings: a flag that may
// hold a secret panics). Nil when the flags were never registered (tests
// that build a Config by hand).
func (b *Base) Settings(names ...string) []audit.Setting {
	if b.flags == nil {
		return nil
	}
	return audit.FlagSettings(b.flags, append(append([]string(nil), commonSettings...), names...)...)
}

// Validate reports the mistakes of the shared flags; a service joins it
// with its own.
func (b *Base) Validate() error {
	var errs []error
	if err := b.Store.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := b.Audit.Validate(); err != nil {
		errs = append(errs, err)
	}
	if b.Server.GRPCAddr == "" {
		errs = append(errs, errors.New("-grpc-addr is required"))
	}
	return errors.Join(errs...)
}

// Deps is what every service runs on, opened by Base.Open.
type Deps struct {
	Audit *audit.Logger
	Store kv.Store
	// Events are the audit events kept in Store (audit.Register lists
	// them).
	Events *audit.Store
	// closers run last first, as deferred calls would.
	closers []func()
}

// Open opens, in this order, the audit log, telemetry (as fris-<name>) and
// the store (kv.Open under name), where the audit events are kept too; on
// an error it closes what it opened.
// The caller defers Close.
func (b *Base) Open(ctx context.Context, name string, log *slog.Logger) (*Deps, error) {
	d := &Deps{}
	if err := d.open(ctx, b, name, log); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

func (d *Deps) open(ctx context.Context, b *Base, name string, log *slog.Logger) error {
	auditLog, closeAudit, err := audit.Open(b.Audit, name, os.Stderr)
	if err != nil {
		return err
	}
	d.Audit = auditLog
	d.closers = append(d.closers, func() { _ = closeAudit() })
	shutdown, err := telemetry.Setup(ctx, "fris-"+name)
	if err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	d.closers = append(d.closers, func() { _ = shutdown(context.Background()) })
	db, err := kv.Open(ctx, b.Store, name, log)
	if err != nil {
		return err
	}
	d.Store = db
	d.closers = append(d.closers, func() { _ = db.Close() })
	// Events recorded from here on are kept in the store too; the
	// writer stops (writing what is queued) before the store closes.
	d.Events = audit.NewStore(db, b.Audit.Retention)
	d.closers = append(d.closers, auditLog.Keep(d.Events, log))
	return nil
}

// Close closes what Open opened: the store, then telemetry, then the audit
// log.
func (d *Deps) Close() {
	for i := len(d.closers) - 1; i >= 0; i-- {
		d.closers[i]()
	}
	d.closers = nil
}
