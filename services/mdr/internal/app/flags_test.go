package app

import (
	"flag"
	"testing"

	"fris.dev/pkg/flagdoc"
)

// documentedElsewhere are the serve flags README.md's table leaves out,
// each described in docs/security.md (reviewed: add a flag here only with
// its paragraph there).
var documentedElsewhere = []string{"audit-log", "insecure-plaintext", "max-recv-bytes", "tls-ca", "tls-cert", "tls-key"}

// TestFlagsDocumented holds the serve flags against README.md's flag table:
// each flag the table names for mdr exists with the table's default, and
// none is undocumented.
func TestFlagsDocumented(t *testing.T) {
	docs, err := flagdoc.Load("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("mdr serve", flag.ContinueOnError)
	var cfg Config
	cfg.RegisterFlags(fs)
	for _, err := range docs.Check("mdr", fs, documentedElsewhere) {
		t.Error(err)
	}
}
