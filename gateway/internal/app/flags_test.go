package app

import (
	"flag"
	"testing"

	"fris.dev/pkg/flagdoc"
)

// documentedElsewhere are the gateway's flags README.md's table leaves
// out, each described in docs/security.md (reviewed: add a flag here only
// with its paragraph there).
var documentedElsewhere = []string{"insecure-plaintext", "revocation-poll", "revocations-url", "tls-ca", "tls-cert", "tls-key", "upstream-timeout"}

// TestFlagsDocumented holds the gateway's flags against README.md's flag
// table: each flag the table names for the gateway exists with the table's
// default, and none is undocumented.
func TestFlagsDocumented(t *testing.T) {
	docs, err := flagdoc.Load("../../..")
	if err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	var cfg Config
	cfg.RegisterFlags(fs)
	for _, err := range docs.Check("gateway", fs, documentedElsewhere) {
		t.Error(err)
	}
}
