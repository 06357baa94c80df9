package audittest

import (
	"flag"
	"strings"
	"testing"

	"fris.dev/pkg/audit"
)

// SettingsNoSecret is each service's check of its settings view: every
// flag register adds that may hold a secret is given a marker value, and
// settings (the service's Config.Settings of its names, which panics on a
// secret or unknown name) must return all want of them without the marker
// or a secret's name.
func SettingsNoSecret(t *testing.T, register func(*flag.FlagSet), settings func() []audit.Setting, want int) {
	t.Helper()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	register(fs)
	const marker = "SECRET-MARKER-4711"
	fs.VisitAll(func(f *flag.Flag) {
		if audit.Secretish(f.Name) {
			if err := fs.Set(f.Name, marker); err != nil {
				t.Logf("-%s takes no marker: %v", f.Name, err)
			}
		}
	})
	got := settings()
	if len(got) < want {
		t.Fatalf("%d settings for %d names", len(got), want)
	}
	for _, s := range got {
		if strings.Contains(s.Value, marker) || audit.Secretish(s.Name) {
			t.Errorf("setting %s shows a secret", s.Name)
		}
	}
}
