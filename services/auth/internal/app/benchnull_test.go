//go:build !fris_bench_null

package app

import (
	"flag"
	"testing"
)

// TestNoBenchNullFlag: a build for deployment has no way to ask for the
// benchmark's stub signer.
func TestNoBenchNullFlag(t *testing.T) {
	fs := flag.NewFlagSet("auth serve", flag.ContinueOnError)
	var cfg Config
	cfg.RegisterFlags(fs)
	if fs.Lookup("bench-null-signer") != nil {
		t.Fatal("-bench-null-signer in a build without the fris_bench_null tag")
	}
}
