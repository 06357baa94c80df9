//go:build fris_bench_null

package app

import (
	"flag"
	"strings"
	"testing"
)

// TestBenchNullNeedsItsVariable: even the benchmark's build refuses the
// stub signer without the variable that names what it does.
func TestBenchNullNeedsItsVariable(t *testing.T) {
	fs := flag.NewFlagSet("auth serve", flag.ContinueOnError)
	var cfg Config
	cfg.RegisterFlags(fs)
	if err := fs.Parse([]string{"-bench-null-signer", "c"}); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BenchNullEnv, "")
	if err := validateBench(&cfg.Keys); err == nil || !strings.Contains(err.Error(), BenchNullEnv) {
		t.Fatalf("without %s: %v", BenchNullEnv, err)
	}
	t.Setenv(BenchNullEnv, BenchNullAck)
	if err := validateBench(&cfg.Keys); err != nil {
		t.Fatal(err)
	}
}
