// Package throttles is the operator API of the abuse limits (pkg/ratelimit)
// that every service with credential checks registers (auth, upload,
// broker): the ThrottleAdmin gRPC service (Register), and the `throttles`
// and `lift-throttle` subcommands of its binary (Commands). The Explorer's
// throttles view calls the same API with an operator's token.
package throttles

import (
	"context"
	"log/slog"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/identity"
	"fris.dev/pkg/ratelimit"
	"fris.dev/pkg/rpcerr"
	ratelimitv1 "fris.dev/proto/ratelimit/v1"
)

// OperatorMethods are the ThrottleAdmin methods a service admits the
// gateway to for an operator's token (server.Service.Operator): the
// Explorer's throttles view. Not to a user administrator: an address or a
// client is no user.
var OperatorMethods = []string{ratelimitv1.ThrottleAdmin_ListThrottles_FullMethodName, ratelimitv1.ThrottleAdmin_LiftThrottle_FullMethodName}

// Register adds the ThrottleAdmin service of the named service's limiter to
// s. The access table admits the operator's certificate to a service
// whose name ends in Admin (pkg/server), the gateway only to
// OperatorMethods for an operator. A lift is audited (class admin).
func Register(s grpc.ServiceRegistrar, name string, limits *ratelimit.Limiter, a *audit.Logger, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ratelimitv1.RegisterThrottleAdminServer(s, &throttleServer{name: name, limits: limits, audit: a, log: log})
}

type throttleServer struct {
	ratelimitv1.UnimplementedThrottleAdminServer
	name   string
	limits *ratelimit.Limiter
	audit  *audit.Logger
	log    *slog.Logger
}

func (s *throttleServer) ListThrottles(ctx context.Context, r *ratelimitv1.ListThrottlesRequest) (*ratelimitv1.ListThrottlesResponse, error) {
	if n := r.GetPageSize(); n < 0 || n > ratelimit.MaxList {
		return nil, rpcerr.From(ctx, s.log, rpcerr.New(rpcerr.ErrInvalid, "page_size is 0..%d", ratelimit.MaxList))
	}
	ts, err := s.limits.Throttled(ctx, int(r.GetPageSize()))
	if err != nil {
		return nil, rpcerr.From(ctx, s.log, err)
	}
	out := &ratelimitv1.ListThrottlesResponse{Throttles: make([]*ratelimitv1.Throttle, 0, len(ts))}
	for _, t := range ts {
		out.Throttles = append(out.Throttles, toProto(t))
	}
	return out, nil
}

func (s *throttleServer) LiftThrottle(ctx context.Context, r *ratelimitv1.LiftThrottleRequest) (*ratelimitv1.LiftThrottleResponse, error) {
	t, found, err := s.limits.Lift(ctx, r.GetId())
	err = rpcerr.From(ctx, s.log, err)
	// The operator the gateway acted for, else the admin certificate's
	// holder (as audit.AdminService names them), under this service's
	// name: "auth.admin.LiftThrottle".
	actor := ""
	if identity.FromIncoming(ctx).Anonymous() {
		actor = audit.ActorAdmin
	}
	target := t.Account
	if target == "" {
		target = t.Addr
	}
	attrs := []slog.Attr{slog.String("id", clipID(r.GetId()))}
	if err == nil {
		attrs = append(attrs, slog.Bool("lifted", found))
		if t.Flow != "" {
			attrs = append(attrs, slog.String("flow", t.Flow), slog.String("kind", t.Kind))
		}
		if t.Kind == "pair" {
			attrs = append(attrs, slog.String("addr", t.Addr))
		}
	}
	s.audit.Record(ctx, audit.Event{Action: s.name + ".admin.LiftThrottle", Actor: actor, Target: target, Err: err, Attrs: attrs, Class: audit.ClassAdmin})
	if err != nil {
		return nil, err
	}
	if found {
		s.log.InfoContext(ctx, "throttle lifted", "id", t.ID, "flow", t.Flow, "kind", t.Kind)
	}
	res := &ratelimitv1.LiftThrottleResponse{Lifted: found}
	if t.Flow != "" {
		res.Throttle = toProto(t)
	}
	return res, nil
}

// clipID bounds what a malformed id puts in the audit log.
func clipID(id string) string {
	if len(id) > 64 {
		id = id[:64]
	}
	return strings.ToValidUTF8(id, "?")
}

func toProto(t ratelimit.Throttle) *ratelimitv1.Throttle {
	return &ratelimitv1.Throttle{Id: t.ID, Flow: t.Flow, Kind: t.Kind, Account: t.Account, Addr: t.Addr,
		Failures: t.Failures, Refused: t.Refused, Until: timestamppb.New(t.Until)}
}
