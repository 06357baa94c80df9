package app

import (
	"google.golang.org/grpc"

	"fris.dev/gateway/internal/explorer"
	"fris.dev/pkg/audit"
	auditv1 "fris.dev/proto/audit/v1"
)

// settingNames are the gateway's flags the Explorer's settings view shows:
// body and connection limits, timeouts, token checks and the Explorer's
// own. Never a secret: audit.FlagSettings refuses any flag that may hold
// one.
var settingNames = []string{
	"max-body", "max-auth-body", "max-path-segment", "max-conns", "max-conns-per-addr", "max-inflight-per-addr",
	"max-conns-per-subject", "max-inflight-per-subject",
	"min-body-rate", "body-rate-window", "body-memory", "read-header-timeout", "read-timeout", "write-timeout", "idle-timeout",
	"upstream-timeout", "trusted-proxies", "cors-origins", "issuer", "token-skew", "revocation-poll", "revocation-fail-closed", "revocation-max-stale",
	"explorer-url", "explorer-sessions", "explorer-stale-after",
}

// settings are the gateway's settings as parsed (none when the flags were
// never registered: tests that build a Config by hand).
func (c *Config) settings() []audit.Setting {
	if c.flags == nil {
		return nil
	}
	return audit.FlagSettings(c.flags, settingNames...)
}

// auditServices are the services' AuditAdmin APIs the Explorer's audit and
// settings views call, in the order they show them.
func auditServices(up Upstreams) []explorer.AuditService {
	var out []explorer.AuditService
	for _, s := range []struct {
		name string
		cc   *grpc.ClientConn
	}{{"auth", up.Auth}, {"mdr", up.MDR}, {"upload", up.Upload}, {"broker", up.Broker}} {
		if s.cc != nil {
			out = append(out, explorer.AuditService{Name: s.name, Client: auditv1.NewAuditAdminClient(s.cc)})
		}
	}
	return out
}
