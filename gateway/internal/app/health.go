package app

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"fris.dev/gateway/internal/authn"
)

// ReadyChecker is a verifier that can tell whether it can verify tokens
// (its signing keys are loaded).
type ReadyChecker interface {
	Ready(ctx context.Context) error
}

// GroupsPath shows each group's state: whether the service behind it (and
// for group A the signing keys) can serve.
const GroupsPath = "/health/groups"

// GroupState is one group's line of GroupsPath.
type GroupState struct {
	Group   string `json:"group"`
	Service string `json:"service"`
	// State is "up", "down" or "off" (no service configured: the group
	// answers 503 by configuration).
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
}

// GroupsReport is the body of GroupsPath; its status is 200 when every
// configured group is up, else 503.
type GroupsReport struct {
	Up     bool         `json:"up"`
	Groups []GroupState `json:"groups"`
}

// groupHealth asks every configured service's gRPC health (which follows
// its store) at once, within 2 s. Reasons are a fixed vocabulary: the page
// is public and must not show addresses or errors.
func groupHealth(up Upstreams, verifier authn.Verifier) http.Handler {
	type group struct {
		id, service string
		cc          *grpc.ClientConn
		extra       func(context.Context) error // after the service is up
		extraReason string
	}
	groups := []group{{id: "A", service: "auth", cc: up.Auth}, {id: "B", service: "mdr", cc: up.MDR},
		{id: "C", service: "upload", cc: up.Upload}, {id: "D", service: "broker", cc: up.Broker}}
	if rc, ok := verifier.(ReadyChecker); ok && up.Auth != nil {
		groups[0].extra, groups[0].extraReason = rc.Ready, "signing keys not loaded"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		rep := GroupsReport{Up: true, Groups: make([]GroupState, len(groups))}
		var wg sync.WaitGroup
		for i, g := range groups {
			st := &rep.Groups[i]
			*st = GroupState{Group: g.id, Service: g.service, State: "up"}
			if g.cc == nil {
				st.State = "off"
				continue
			}
			wg.Go(func() {
				res, err := healthpb.NewHealthClient(g.cc).Check(ctx, &healthpb.HealthCheckRequest{})
				switch {
				case err != nil:
					st.State, st.Reason = "down", "unreachable"
				case res.GetStatus() != healthpb.HealthCheckResponse_SERVING:
					st.State, st.Reason = "down", "not serving (its store does not answer)"
				case g.extra != nil && g.extra(ctx) != nil:
					st.State, st.Reason = "down", g.extraReason
				}
			})
		}
		wg.Wait()
		code := http.StatusOK
		for _, g := range rep.Groups {
			if g.State == "down" {
				rep.Up, code = false, http.StatusServiceUnavailable
			}
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(rep)
	})
}
