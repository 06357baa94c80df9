package explorer

import (
	"net/http"
	"sync"

	"google.golang.org/grpc/status"

	"fris.dev/pkg/audit"
	auditv1 "fris.dev/proto/audit/v1"
)

// The settings view: what the gateway and each service run with that an
// operator needs to know (token lifetimes, registration, abuse limits,
// sizes, audit retention), read-only. Each service says its own through
// AuditAdmin.GetSettings with the operator's identity; the gateway's are
// Config.Settings. Both come from pkg/audit's FlagSettings, which refuses
// any flag that may hold a secret.
const SettingsPath = OperatorPath + "settings"

func (a *App) settingsRoutes() []route {
	return []route{{pattern: "GET " + SettingsPath, access: operator, page: a.settings}}
}

// settingsGroup is one component's settings.
type settingsGroup struct {
	Name     string
	Settings []audit.Setting
	// Err is why the service did not say.
	Err string
}

func (a *App) settings(q *req) error {
	v := a.opView(q, "op.settings.title", "settings")
	groups := make([]settingsGroup, len(a.cfg.Audit)+1)
	groups[0] = settingsGroup{Name: "gateway", Settings: a.cfg.Settings}
	var wg sync.WaitGroup
	for i, s := range a.cfg.Audit {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := settingsGroup{Name: s.Name}
			res, err := s.Client.GetSettings(q.ctx, &auditv1.GetSettingsRequest{})
			if err != nil {
				a.cfg.Log.WarnContext(q.ctx, "explorer: settings", "service", s.Name, "err", err)
				g.Err = status.Convert(err).Message()
			}
			for _, st := range res.GetSettings() {
				if audit.Secretish(st.GetName()) {
					continue // never, whatever a service sends
				}
				g.Settings = append(g.Settings, audit.Setting{Name: st.GetName(), Value: st.GetValue(), Description: st.GetDescription()})
			}
			groups[i+1] = g
		}()
	}
	wg.Wait()
	v.Data = groups
	a.render(q, http.StatusOK, "operator-settings", v)
	return nil
}
