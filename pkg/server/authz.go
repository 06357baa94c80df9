package server

import (
	"context"
	"log/slog"
	"sort"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/identity"
	"fris.dev/pkg/mtls"
)

// Access says who may call what: per gRPC method prefix
// ("/fris.mdr.v1.MdrService/" or one method), the certificate names
// admitted. The longest matching prefix decides; a method no prefix matches
// is refused. Anyone admits every certificate the deployment's CA signed.
type Access map[string][]string

// Anyone in an Access entry admits every verified peer.
const Anyone = "*"

// defaultAccess is the table for the services gs serves
// (docs/security.md, "Service-to-service trust"): gRPC health to any
// verified peer; admin services and reflection (which lists them) to
// operators; every other service, the public APIs, to the gateway. extra
// adds to it (mdr admits upload to its value check).
func defaultAccess(gs *grpc.Server, extra Access) Access {
	a := Access{}
	for name := range gs.GetServiceInfo() {
		p := "/" + name + "/"
		switch {
		case name == "grpc.health.v1.Health":
			a[p] = []string{Anyone}
		case strings.HasPrefix(name, "grpc.reflection."), strings.HasSuffix(name, "Admin"):
			a[p] = []string{mtls.Admin}
		default:
			a[p] = []string{mtls.Gateway}
		}
	}
	for p, names := range extra {
		a[p] = append(append([]string(nil), a[p]...), names...)
	}
	return a
}

// who are the names the longest prefix of method admits.
func (a Access) who(method string) []string {
	best := -1
	var who []string
	for p, names := range a {
		if strings.HasPrefix(method, p) && len(p) > best {
			best, who = len(p), names
		}
	}
	return who
}

// allows reports whether the peer name may call method.
func (a Access) allows(name, method string) bool {
	for _, n := range a.who(method) {
		if n == name || n == Anyone {
			return true
		}
	}
	return false
}

// String lists the table, sorted, for the start-up log.
func (a Access) String() string {
	ps := make([]string, 0, len(a))
	for p, names := range a {
		ps = append(ps, p+"="+strings.Join(names, ","))
	}
	sort.Strings(ps)
	return strings.Join(ps, " ")
}

// identityPrefix starts every key pkg/identity carries: the caller the
// gateway verified, its client address, its auth prefix.
const identityPrefix = "x-fris-"

// authorizer refuses calls the table does not admit, and identity metadata
// from anyone but the gateway: a service believes x-fris-subject only
// because the gateway verified the token behind it.
type authorizer struct {
	access Access
	log    *slog.Logger
}

func (z *authorizer) check(ctx context.Context, method string) error {
	name, ok := mtls.PeerName(ctx)
	if !ok {
		return status.Error(codes.Unauthenticated, "a client certificate signed by the deployment's CA is required")
	}
	if !z.access.allows(name, method) {
		z.log.WarnContext(ctx, "call refused", "peer", name, "method", method, "reason", "not in the access table")
		return status.Errorf(codes.PermissionDenied, "certificate %q may not call %s", name, method)
	}
	if name != mtls.Gateway {
		md, _ := metadata.FromIncomingContext(ctx)
		for k := range md {
			if strings.HasPrefix(k, identityPrefix) {
				z.log.WarnContext(ctx, "call refused", "peer", name, "method", method, "reason", "identity metadata from a peer other than the gateway", "key", k)
				return status.Errorf(codes.PermissionDenied, "identity metadata (%s) is accepted only from the gateway, not from certificate %q", k, name)
			}
		}
	}
	return nil
}

// method is the path the client called: a generated handler registered
// under another service name reports its own name in FullMethod.
func method(ctx context.Context, full string) string {
	if m, ok := grpc.Method(ctx); ok {
		return m
	}
	return full
}

func (z *authorizer) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := z.check(ctx, method(ctx, info.FullMethod)); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (z *authorizer) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := z.check(ss.Context(), method(ss.Context(), info.FullMethod)); err != nil {
		return err
	}
	return h(srv, ss)
}

// withOperator admits the gateway to the methods (full names) it may call
// on an operator's behalf, besides whoever the table admits to them
// already (the longest prefix decides, so each method's entry keeps them).
func withOperator(a Access, methods []string) Access {
	if len(methods) == 0 {
		return a
	}
	out := Access{}
	for p, names := range a {
		out[p] = names
	}
	for _, m := range methods {
		out[m] = append(append([]string(nil), a.who(m)...), mtls.Gateway)
	}
	return out
}

// operatorGate guards the admin methods the gateway may call for an
// operator (docs/security.md, "Service-to-service trust"): such a call
// from the gateway, or any call that carries a user's identity, must
// carry one whose token grants identity.ScopeOperator, or a finer role the
// method admits (Service.Roles). The gateway's certificate alone is not
// enough, so a compromised gateway without an operator's token cannot
// approve or delete banks. Calls without identity from the admin
// certificate (the CLIs) pass as before.
type operatorGate struct {
	// methods are the scopes that admit each guarded method, the
	// operator's first.
	methods map[string][]string
	log     *slog.Logger
}

func newOperatorGate(methods []string, roles map[string][]string, log *slog.Logger) *operatorGate {
	g := &operatorGate{methods: map[string][]string{}, log: log}
	for _, m := range methods {
		g.methods[m] = []string{identity.ScopeOperator}
	}
	scopes := make([]string, 0, len(roles))
	for s := range roles {
		scopes = append(scopes, s)
	}
	sort.Strings(scopes) // the refusal names them in a stable order
	for _, s := range scopes {
		for _, m := range roles[s] {
			// A role admits only methods operators have: it is finer, never
			// wider.
			if g.methods[m] != nil {
				g.methods[m] = append(g.methods[m], s)
			}
		}
	}
	return g
}

func (g *operatorGate) check(ctx context.Context, method string) error {
	scopes := g.methods[method]
	if scopes == nil {
		return nil
	}
	name, _ := mtls.PeerName(ctx)
	id := identity.FromIncoming(ctx)
	if name != mtls.Gateway && id.Anonymous() {
		return nil
	}
	if id.Anonymous() {
		g.log.WarnContext(ctx, "call refused", "peer", name, "method", method, "reason", "no operator identity")
		return status.Error(codes.Unauthenticated, "an operator's access token is required")
	}
	for _, s := range scopes {
		if id.HasScope(s) {
			return nil
		}
	}
	g.log.WarnContext(ctx, "call refused", "peer", name, "method", method, "subject", id.Subject, "reason", "no operator scope")
	return status.Errorf(codes.PermissionDenied, "the access token lacks the scope %s", strings.Join(scopes, " or "))
}

func (g *operatorGate) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := g.check(ctx, method(ctx, info.FullMethod)); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (g *operatorGate) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := g.check(ss.Context(), method(ss.Context(), info.FullMethod)); err != nil {
		return err
	}
	return h(srv, ss)
}
