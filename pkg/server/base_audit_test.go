package server

import (
	"context"
	"flag"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/kv"
)

// TestBaseKeepsAuditEvents: what a service records through Deps.Audit is
// in its store after Close (the writer stops before the store closes);
// -audit-keep and -audit-keep-for reach the store, and negative ones are
// refused; the settings name the shared flags as parsed.
func TestBaseKeepsAuditEvents(t *testing.T) {
	var b Base
	fs := flag.NewFlagSet("mdr serve", flag.ContinueOnError)
	b.RegisterFlags(fs, "127.0.0.1:1", "")
	fs.Duration("refresh", 0, "how often")
	dir := t.TempDir()
	if err := fs.Parse([]string{"-data-dir", dir, "-audit-log", filepath.Join(dir, "audit.log"), "-audit-keep", "500", "-audit-keep-for", "48h"}); err != nil {
		t.Fatal(err)
	}
	d, err := b.Open(context.Background(), "mdr", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if r := d.Events.Retention(); r.Keep != 500 || r.For.Hours() != 48 {
		t.Errorf("retention %+v", r)
	}
	d.Audit.Record(context.Background(), audit.Event{Action: "mdr.admin.Import", Actor: audit.ActorAdmin})
	d.Close()

	db, err := kv.OpenBolt(filepath.Join(dir, "mdr.db"), kv.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	evs, _, err := audit.NewStore(db, audit.DefaultRetention).List(context.Background(), audit.Filter{})
	if err != nil || len(evs) != 1 || evs[0].Action != "mdr.admin.Import" || evs[0].Actor != "admin-api" {
		t.Fatalf("stored %+v, %v", evs, err)
	}

	var names []string
	for _, s := range b.Settings("refresh") {
		names = append(names, s.Name+"="+s.Value)
	}
	if got := strings.Join(names, " "); got != "store=bolt max-recv-bytes=67108864 audit-keep=500 audit-keep-for=48h0m0s refresh=0s" {
		t.Errorf("settings %s", got)
	}

	b.Audit.Retention.Keep = -1
	if err := b.Validate(); err == nil || !strings.Contains(err.Error(), "-audit-keep") {
		t.Errorf("negative -audit-keep: %v", err)
	}
}
