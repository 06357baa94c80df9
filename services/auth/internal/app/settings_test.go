package app

import (
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
