package app

import (
	"flag"
	"testing"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/audit/audittest"
)

// TestSettingsNoSecret: every flag the settings view names exists, and no
// flag that may hold a secret reaches it, whatever its value.
func TestSettingsNoSecret(t *testing.T) {
	var cfg Config
	audittest.SettingsNoSecret(t, cfg.RegisterFlags, func() []audit.Setting { return cfg.Settings(settingNames...) }, len(settingNames))
}

// TestSettingsPasswordPolicy: the settings view shows the password policy
// as the flags set it.
func TestSettingsPasswordPolicy(t *testing.T) {
	var cfg Config
	fs := flag.NewFlagSet("auth serve", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := fs.Parse([]string{"-password-min-length", "14", "-password-common-list=false"}); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range cfg.Settings(settingNames...) {
		got[s.Name] = s.Value
	}
	for name, want := range map[string]string{"password-min-length": "14", "password-common-list": "false"} {
		if got[name] != want {
			t.Errorf("settings: %s = %q, want %q (all: %v)", name, got[name], want, got)
		}
	}
}
