package audit

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"fris.dev/pkg/identity"
)

// AdminService returns a copy of an admin API's service description whose
// state-changing methods record an audit event each (actor "admin-api", or
// the operator the gateway called for; class admin: only the operator's
// certificate, or the gateway for a token with an administrator's role,
// reaches an admin API),
// so every admin call of every service is audited in one place: register
// the result with grpc.Server.RegisterService instead of the generated
// Register<X>Server. Reads (methods named List*, Get*, Count*) are not
// recorded.
func AdminService(desc *grpc.ServiceDesc, l *Logger) *grpc.ServiceDesc {
	d := *desc
	d.Methods = make([]grpc.MethodDesc, len(desc.Methods))
	for i, m := range desc.Methods {
		d.Methods[i] = m
		if readOnly(m.MethodName) {
			continue
		}
		action := adminAction(desc.ServiceName, m.MethodName)
		h := m.Handler
		d.Methods[i].Handler = func(srv any, ctx context.Context, dec func(any) error, next grpc.UnaryServerInterceptor) (any, error) {
			record := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
				var res any
				var err error
				if next != nil {
					res, err = next(ctx, req, info, handler)
				} else {
					res, err = handler(ctx, req)
				}
				l.Record(ctx, Event{Action: action, Actor: adminActor(ctx), Err: err, Attrs: requestAttrs(req, res, err), Class: ClassAdmin})
				return res, err
			}
			return h(srv, ctx, dec, record)
		}
	}
	return &d
}

// adminActor is the operator the gateway acted for (the Explorer's operator
// views; only the gateway may send identity metadata), else the admin API's
// certificate holder.
func adminActor(ctx context.Context) string {
	if !identity.FromIncoming(ctx).Anonymous() {
		return "" // Record names the subject
	}
	return ActorAdmin
}

func readOnly(method string) bool {
	for _, p := range []string{"List", "Get", "Count"} {
		if strings.HasPrefix(method, p) {
			return true
		}
	}
	return false
}

// adminAction is "<service>.admin.<Method>": "fris.auth.v1.AuthAdmin",
// "SetUserScopes" -> "auth.admin.SetUserScopes".
func adminAction(service, method string) string {
	svc := strings.TrimPrefix(service, "fris.")
	if i := strings.Index(svc, "."); i > 0 {
		svc = svc[:i]
	}
	return svc + ".admin." + method
}

// loggable are the request fields an audit event copies: identifiers of
// what the call acts on and the settings it makes. Anything else (passwords,
// secrets, registry or inquiry content) is left out by not being named here.
func loggable(name string) bool {
	switch name {
	case "email", "client_id", "site_id", "teiler_id", "teiler", "username", "id", "name", "author",
		"scopes", "disabled", "email_verified", "type", "if_missing", "target_sites", "revoke_tokens", "kind", "confirm":
		return true
	}
	return false
}

// requestAttrs renders the loggable fields of req (one level of nested
// messages, such as upload's teiler) and, on success, the id a create
// returned.
func requestAttrs(req, res any, err error) []slog.Attr {
	var attrs []slog.Attr
	if m, ok := req.(proto.Message); ok {
		attrs = fieldAttrs(m.ProtoReflect(), "", attrs, 1)
	}
	if m, ok := res.(proto.Message); ok && err == nil {
		if fd := m.ProtoReflect().Descriptor().Fields().ByName("id"); fd != nil && !fd.IsList() && fd.Kind() != protoreflect.MessageKind {
			if v := m.ProtoReflect().Get(fd); v.IsValid() && v.String() != "" && v.String() != "0" {
				attrs = append(attrs, slog.String("result_id", v.String()))
			}
		}
	}
	return attrs
}

func fieldAttrs(m protoreflect.Message, prefix string, attrs []slog.Attr, depth int) []slog.Attr {
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		name := string(fd.Name())
		if !loggable(name) || fd.IsMap() {
			continue
		}
		v := m.Get(fd)
		switch {
		case fd.IsList():
			if fd.Kind() != protoreflect.StringKind {
				continue
			}
			l := v.List()
			xs := make([]string, l.Len())
			for j := range xs {
				xs[j] = l.Get(j).String()
			}
			attrs = append(attrs, slog.String(prefix+name, strings.Join(xs, ",")))
		case fd.Kind() == protoreflect.MessageKind:
			if depth > 0 && m.Has(fd) {
				attrs = fieldAttrs(v.Message(), prefix+name+".", attrs, depth-1)
			}
		case fd.Kind() == protoreflect.BytesKind:
			// Never: bytes fields hold documents and keys.
		default:
			attrs = append(attrs, slog.String(prefix+name, fmt.Sprint(v.Interface())))
		}
	}
	return attrs
}
