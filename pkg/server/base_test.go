package server

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBaseFlagsAndValidate(t *testing.T) {
	var b Base
	fs := flag.NewFlagSet("mdr serve", flag.ContinueOnError)
	b.RegisterFlags(fs, "127.0.0.1:1", "127.0.0.1:2")
	if err := fs.Parse([]string{"-log-level", "debug", "-data-dir", t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if b.Level() != "debug" || b.Server.GRPCAddr != "127.0.0.1:1" || b.Server.OpsAddr != "127.0.0.1:2" {
		t.Fatalf("parsed %+v", b)
	}
	if err := b.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	b.Server.GRPCAddr = ""
	b.Store.Backend = "nope"
	err := b.Validate()
	if err == nil || !strings.Contains(err.Error(), "-grpc-addr is required") || !strings.Contains(err.Error(), `unknown store "nope"`) {
		t.Fatalf("want both mistakes, got %v", err)
	}
}

func TestBaseOpenClose(t *testing.T) {
	var b Base
	fs := flag.NewFlagSet("mdr serve", flag.ContinueOnError)
	b.RegisterFlags(fs, "127.0.0.1:1", "")
	dir := t.TempDir()
	if err := fs.Parse([]string{"-data-dir", dir}); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	d, err := b.Open(context.Background(), "mdr", log)
	if err != nil {
		t.Fatal(err)
	}
	if d.Audit == nil || d.Store == nil {
		t.Fatalf("open: %+v", d)
	}
	if _, err := os.Stat(filepath.Join(dir, "mdr.db")); err != nil {
		t.Fatalf("store file: %v", err)
	}
	d.Close()
	// Closed: the file can be opened again (bbolt locks it while open).
	d, err = b.Open(context.Background(), "mdr", log)
	if err != nil {
		t.Fatalf("reopen after Close: %v", err)
	}
	d.Close()

	// A store that cannot open fails Open, which returns nothing to close.
	b.Store.DataDir = filepath.Join(dir, "missing", "\x00")
	if d, err := b.Open(context.Background(), "mdr", log); err == nil || d != nil {
		t.Fatalf("open of an impossible path = %v, %v; want nil and an error", d, err)
	}
}
