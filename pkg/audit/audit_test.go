package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"fris.dev/pkg/identity"
)

func lines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("not JSON: %s", l)
		}
		out = append(out, m)
	}
	return out
}

// incoming is a call's context as a service sees it behind the gateway.
func incoming(id identity.Identity, md ...string) context.Context {
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(append(id.Pairs(), md...)...))
	return peer.NewContext(ctx, &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4711}})
}

func TestRecord(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  context.Context
		ev   Event
		want map[string]any
		gone []string
	}{
		{
			name: "verified caller through the gateway",
			ctx:  incoming(identity.Identity{Subject: "42", Client: "app"}, identity.KeyClientAddr, "203.0.113.9", "x-request-id", "r1"),
			ev:   Event{Action: "auth.users.search", Target: "query"},
			want: map[string]any{"log": "audit", "service": "auth", "action": "auth.users.search", "actor": "42", "client": "app",
				"target": "query", "client_addr": "203.0.113.9", "peer": "127.0.0.1:4711", "request_id": "r1", "outcome": "success", "level": "INFO"},
			gone: []string{"reason"},
		},
		{
			name: "anonymous failure with a status",
			ctx:  incoming(identity.Identity{}),
			ev:   Event{Action: "auth.login", Target: "ada@example.org", Err: status.Error(codes.Unauthenticated, "email or password is wrong")},
			want: map[string]any{"actor": "anonymous", "target": "ada@example.org", "outcome": "failure", "level": "WARN",
				"reason": "Unauthenticated: email or password is wrong"},
			gone: []string{"client", "client_addr"},
		},
		{
			name: "named actor, plain error, extra attributes",
			ctx:  context.Background(),
			ev:   Event{Action: "x.y", Actor: ActorAdmin, Err: errors.New("store down")},
			want: map[string]any{"actor": "admin-api", "outcome": "failure", "reason": "store down"},
			gone: []string{"peer", "target"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			New(&buf, "auth").Record(tc.ctx, tc.ev)
			got := lines(t, buf.Bytes())
			if len(got) != 1 {
				t.Fatalf("%d lines: %s", len(got), buf.Bytes())
			}
			for k, v := range tc.want {
				if got[0][k] != v {
					t.Errorf("%s = %v, want %v (%s)", k, got[0][k], v, buf.Bytes())
				}
			}
			for _, k := range tc.gone {
				if _, ok := got[0][k]; ok {
					t.Errorf("%s present: %s", k, buf.Bytes())
				}
			}
			if _, ok := got[0]["time"]; !ok {
				t.Error("no time")
			}
		})
	}
	// A nil logger records nothing and does not panic.
	Discard().Record(context.Background(), Event{Action: "x"})
}

// Refusals are recorded only while the cap allows; other events always.
func TestLimitRefusals(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, "auth")
	allowed, asked := 2, 0
	l.LimitRefusals(func() bool { asked++; allowed--; return allowed >= 0 })
	refused := status.Error(codes.ResourceExhausted, "too many attempts")
	for range 10 {
		l.Record(context.Background(), Event{Action: "auth.login", Err: refused})
	}
	l.Record(context.Background(), Event{Action: "auth.login", Err: status.Error(codes.Unauthenticated, "wrong")})
	l.Record(context.Background(), Event{Action: "auth.login"})
	got := lines(t, buf.Bytes())
	if len(got) != 4 || asked != 10 {
		t.Fatalf("%d events written, cap asked %d times; want 2 refusals and the 2 others, 10 asks:\n%s", len(got), asked, buf.Bytes())
	}
}

func TestOpenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, closeFn, err := Open(Config{Path: path}, "broker", os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	l.Record(context.Background(), Event{Action: "broker.bank.register", Target: "bank@example.org"})
	if err := closeFn(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if got := lines(t, b); len(got) != 1 || got[0]["action"] != "broker.bank.register" || got[0]["service"] != "broker" {
		t.Fatalf("file holds %s", b)
	}
	if _, _, err := Open(Config{Path: filepath.Join(t.TempDir(), "no", "such", "dir")}, "x", os.Stderr); err == nil {
		t.Fatal("unwritable path accepted")
	}
}

// adminRequest builds a request type with identifiers, settings and
// secrets, as admin requests have them.
func adminRequest(t *testing.T) protoreflect.MessageDescriptor {
	t.Helper()
	str := descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum()
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	rep := descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	fd := &descriptorpb.FileDescriptorProto{
		Name: proto.String("audit_test.proto"), Package: proto.String("fris.test.v1"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("Teiler"), Field: []*descriptorpb.FieldDescriptorProto{
				{Name: proto.String("site_id"), Number: proto.Int32(1), Type: str, Label: opt},
				{Name: proto.String("secret"), Number: proto.Int32(2), Type: str, Label: opt},
			}},
			{Name: proto.String("SetThingRequest"), Field: []*descriptorpb.FieldDescriptorProto{
				{Name: proto.String("email"), Number: proto.Int32(1), Type: str, Label: opt},
				{Name: proto.String("password"), Number: proto.Int32(2), Type: str, Label: opt},
				{Name: proto.String("scopes"), Number: proto.Int32(3), Type: str, Label: rep},
				{Name: proto.String("teiler"), Number: proto.Int32(4), Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(), Label: opt, TypeName: proto.String(".fris.test.v1.Teiler")},
				{Name: proto.String("id"), Number: proto.Int32(5), Type: str, Label: opt},
				{Name: proto.String("disabled"), Number: proto.Int32(6), Type: descriptorpb.FieldDescriptorProto_TYPE_BOOL.Enum(), Label: opt},
			}},
		},
	}
	f, err := protodesc.NewFile(fd, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f.Messages().ByName("SetThingRequest")
}

func TestAdminService(t *testing.T) {
	md := adminRequest(t)
	req := dynamicpb.NewMessage(md)
	set := func(name string, v protoreflect.Value) { req.Set(md.Fields().ByName(protoreflect.Name(name)), v) }
	set("email", protoreflect.ValueOfString("ada@example.org"))
	set("password", protoreflect.ValueOfString("hunter2-hunter2"))
	set("disabled", protoreflect.ValueOfBool(true))
	scopes := req.Mutable(md.Fields().ByName("scopes")).List()
	scopes.Append(protoreflect.ValueOfString("broker:researcher"))
	scopes.Append(protoreflect.ValueOfString("users:search"))
	teiler := req.Mutable(md.Fields().ByName("teiler")).Message()
	teiler.Set(teiler.Descriptor().Fields().ByName("site_id"), protoreflect.ValueOfString("charite"))
	teiler.Set(teiler.Descriptor().Fields().ByName("secret"), protoreflect.ValueOfString("s3cr3t-s3cr3t"))

	var fail error
	calls := 0
	// handler mimics a generated method handler.
	handler := func(method string) grpc.MethodDesc {
		return grpc.MethodDesc{MethodName: method, Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			in := dynamicpb.NewMessage(md)
			if err := dec(in); err != nil {
				return nil, err
			}
			impl := func(context.Context, any) (any, error) {
				calls++
				res := dynamicpb.NewMessage(md)
				res.Set(md.Fields().ByName("id"), protoreflect.ValueOfString("17"))
				return res, fail
			}
			if ic == nil {
				return impl(ctx, in)
			}
			return ic(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: "/fris.test.v1.TestAdmin/" + method}, impl)
		}}
	}
	desc := &grpc.ServiceDesc{ServiceName: "fris.test.v1.TestAdmin", Methods: []grpc.MethodDesc{handler("SetThing"), handler("ListThings"), handler("GetThing"), handler("CountThings")}}
	var buf bytes.Buffer
	wrapped := AdminService(desc, New(&buf, "test"))
	if desc.Methods[0].Handler == nil || &desc.Methods[0] == &wrapped.Methods[0] {
		t.Fatal("the original description was changed")
	}
	dec := func(v any) error { proto.Merge(v.(proto.Message), req); return nil }
	passthrough := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return h(ctx, req)
	}
	ctx := incoming(identity.Identity{})

	for _, tc := range []struct {
		name    string
		method  int
		ic      grpc.UnaryServerInterceptor
		fail    error
		records bool
		outcome string
	}{
		{"change without interceptor", 0, nil, nil, true, Success},
		{"change through the server's interceptors", 0, passthrough, nil, true, Success},
		{"failed change", 0, passthrough, status.Error(codes.NotFound, "no such user"), true, Failure},
		{"list", 1, passthrough, nil, false, ""},
		{"get", 2, nil, nil, false, ""},
		{"count", 3, nil, nil, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			buf.Reset()
			calls, fail = 0, tc.fail
			_, err := wrapped.Methods[tc.method].Handler(nil, ctx, dec, tc.ic)
			if calls != 1 || !errors.Is(err, tc.fail) {
				t.Fatalf("calls %d, err %v", calls, err)
			}
			got := lines(t, buf.Bytes())
			if !tc.records {
				if len(got) != 0 {
					t.Fatalf("a read was recorded: %s", buf.Bytes())
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("%d events: %s", len(got), buf.Bytes())
			}
			e := got[0]
			for k, v := range map[string]any{"action": "test.admin.SetThing", "actor": ActorAdmin, "outcome": tc.outcome,
				"email": "ada@example.org", "scopes": "broker:researcher,users:search", "teiler.site_id": "charite", "disabled": "true", "peer": "127.0.0.1:4711"} {
				if e[k] != v {
					t.Errorf("%s = %v, want %v", k, e[k], v)
				}
			}
			if (tc.fail == nil) != (e["result_id"] == "17") {
				t.Errorf("result_id = %v", e["result_id"])
			}
			if s := buf.String(); strings.Contains(s, "hunter2") || strings.Contains(s, "s3cr3t") || strings.Contains(s, "password") {
				t.Fatalf("a secret was logged: %s", s)
			}
		})
	}
	// A change the gateway made for a signed-in operator (the Explorer's
	// operator views) names the operator, not the admin API.
	t.Run("for an operator", func(t *testing.T) {
		buf.Reset()
		calls, fail = 0, nil
		op := incoming(identity.Identity{Subject: "op-7", Client: "fris-explorer", Scopes: []string{identity.ScopeOperator}})
		if _, err := wrapped.Methods[0].Handler(nil, op, dec, passthrough); err != nil {
			t.Fatal(err)
		}
		got := lines(t, buf.Bytes())
		if len(got) != 1 || got[0]["actor"] != "op-7" || got[0]["client"] != "fris-explorer" {
			t.Fatalf("events %v, want one with actor op-7 and client fris-explorer", got)
		}
	})
}
