package app

import (
	"flag"
	"strings"
	"testing"

	"fris.dev/pkg/audit"
)

// TestSettingsNoSecret: every flag the settings view names exists, and no
// flag that may hold a secret reaches it, whatever its value.
func TestSettingsNoSecret(t *testing.T) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var cfg Config
	cfg.RegisterFlags(fs)
	const marker = "SECRET-MARKER-4711"
	fs.VisitAll(func(f *flag.Flag) {
		if audit.Secretish(f.Name) {
			if err := fs.Set(f.Name, marker); err != nil {
				t.Logf("-%s takes no marker: %v", f.Name, err)
			}
		}
	})
	settings := cfg.Settings(settingNames...) // panics on a secret or unknown name
	if len(settings) < len(settingNames) {
		t.Fatalf("%d settings for %d names", len(settings), len(settingNames))
	}
	for _, s := range settings {
		if strings.Contains(s.Value, marker) || audit.Secretish(s.Name) {
			t.Errorf("setting %s shows a secret", s.Name)
		}
	}
}
