package config

import (
	"flag"
	"testing"
)

func TestParseEnvFallbackAndFlagPrecedence(t *testing.T) {
	t.Setenv("FRIS_TEST_DATA_DIR", "/from/env")
	t.Setenv("FRIS_TEST_GRPC_ADDR", "env:1")
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	dir := fs.String("data-dir", "default", "")
	addr := fs.String("grpc-addr", "default", "")
	other := fs.String("other", "default", "")
	if err := Parse(fs, []string{"-grpc-addr", "flag:2"}, "FRIS_TEST"); err != nil {
		t.Fatal(err)
	}
	if *dir != "/from/env" || *addr != "flag:2" || *other != "default" {
		t.Fatalf("got dir=%q addr=%q other=%q", *dir, *addr, *other)
	}
	fs2 := flag.NewFlagSet("test", flag.ContinueOnError)
	fs2.Int("n", 0, "")
	t.Setenv("FRIS_TEST_N", "not-a-number")
	if err := Parse(fs2, nil, "FRIS_TEST"); err == nil {
		t.Fatal("bad env value accepted")
	}
}
