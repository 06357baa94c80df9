package backup_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fris.dev/pkg/backup"
	"fris.dev/pkg/cmdutil"
	"fris.dev/pkg/kv"
)

// TestCommandLines runs the subcommands as an operator types them: usage
// errors exit 2, restore reads -data-dir from the service's environment
// variable as `serve` does, and backup allows an hour by default.
func TestCommandLines(t *testing.T) {
	src := t.TempDir()
	file, good := storeFile(t, src, "backup.db")
	envDir := filepath.Join(t.TempDir(), "from-env")
	t.Setenv("FRIS_SVC_DATA_DIR", envDir)
	flagDir := filepath.Join(t.TempDir(), "from-flag")
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		out    string // in stdout (exit 0) or the message
		stored string // the directory the store must now be in
	}{
		{"backup without -out", []string{"backup", "-insecure-plaintext"}, 2, "usage: svc backup -out FILE [-force]", ""},
		{"restore without a file", []string{"restore"}, 2, "usage: svc restore [-data-dir DIR] [-force] FILE", ""},
		{"restore into -data-dir", []string{"restore", "-data-dir", flagDir, file}, 0, "restored from " + file, flagDir},
		{"restore into FRIS_SVC_DATA_DIR", []string{"restore", file}, 0, kv.BoltFile(envDir, "svc"), envDir},
		{"restore over it", []string{"restore", file}, 1, "exists: -force replaces it", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout bytes.Buffer
			tool := cmdutil.Tool{Name: "svc", EnvPrefix: "FRIS_SVC", DefaultAddr: "127.0.0.1:1", Stderr: io.Discard}
			bk, rs := backup.Commands(tool, &stdout)
			code, msg := cmdutil.ExitCode(tool.Root(bk, rs).ParseAndRun(context.Background(), tc.args))
			if code == 0 {
				msg = stdout.String()
			}
			if code != tc.code || !strings.Contains(msg, tc.out) {
				t.Fatalf("%v: exit %d, %q; want %d with %q", tc.args, code, msg, tc.code, tc.out)
			}
			if tc.stored != "" {
				if b, err := os.ReadFile(kv.BoltFile(tc.stored, "svc")); err != nil || !bytes.Equal(b, good) {
					t.Fatalf("the store in %s: %v", tc.stored, err)
				}
			}
		})
	}
	bk, _ := backup.Commands(cmdutil.Tool{Name: "svc", EnvPrefix: "FRIS_SVC", Stderr: io.Discard}, io.Discard)
	if got := bk.FlagSet.Lookup("timeout").DefValue; got != "1h0m0s" {
		t.Fatalf("backup -timeout defaults to %s, want 1h", got)
	}
}
