package certscmd

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fris.dev/pkg/cmdutil"
)

func TestRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	tests := []struct {
		name  string
		args  []string
		err   error
		wrote int
	}{
		{"first run makes the CA and two certificates", []string{"-dir", dir, "-names", "gateway, admin"}, nil, 6},
		{"a rerun makes only what is missing", []string{"-dir", dir, "-names", "gateway,admin,mdr"}, nil, 2},
		{"nothing missing", []string{"-dir", dir, "-names", "gateway,admin,mdr"}, nil, 0},
		{"an argument", []string{"-dir", dir, "extra"}, cmdutil.ErrUsage, 0},
		{"an unknown flag", []string{"-days", "3"}, cmdutil.ErrUsage, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			err := Run(tc.args, &out, io.Discard)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if got := strings.Count(out.String(), "wrote "); got != tc.wrote {
				t.Fatalf("wrote %d files, want %d:\n%s", got, tc.wrote, out.String())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "mdr-key.pem")); err != nil {
		t.Fatal(err)
	}
}
