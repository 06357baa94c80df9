package app

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"fris.dev/gateway/internal/routes"
	"fris.dev/pkg/identity"
	"fris.dev/pkg/rpcclient"
)

// The REST paths of groups A, B and the researcher API are written twice:
// as google.api.http rules in the protos (grpc-gateway's mux serves those)
// and as the gateway's route table (routes.Auth, routes.MDR, the
// researcher routes), which decides what reaches that mux at all. These
// tests keep the two in step.

// httpBinding is one google.api.http rule (or additional binding) of an
// RPC: rpc is its full gRPC method name, "/fris.mdr.v1.MdrService/GetX".
type httpBinding struct {
	rpc, method, path string
}

func (b httpBinding) String() string { return b.method + " " + b.path + " (" + b.rpc + ")" }

// httpBindings reads the HTTP rules of every RPC in FRIS's generated file
// descriptors (fris.<svc>.v1, registered by the imports of package app).
func httpBindings(t *testing.T) []httpBinding {
	t.Helper()
	var out []httpBinding
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(fd.Package()), "fris.") {
			return true
		}
		for i := 0; i < fd.Services().Len(); i++ {
			sd := fd.Services().Get(i)
			for j := 0; j < sd.Methods().Len(); j++ {
				md := sd.Methods().Get(j)
				rule, _ := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule)
				if rule == nil {
					continue
				}
				rpc := "/" + string(sd.FullName()) + "/" + string(md.Name())
				for _, r := range append([]*annotations.HttpRule{rule}, rule.GetAdditionalBindings()...) {
					method, path := ruleTarget(r)
					if method == "" {
						t.Errorf("%s: an HTTP rule this test cannot read: %v", rpc, r)
						continue
					}
					out = append(out, httpBinding{rpc: rpc, method: method, path: path})
				}
			}
		}
		return true
	})
	return out
}

func ruleTarget(r *annotations.HttpRule) (method, path string) {
	switch p := r.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		return http.MethodGet, p.Get
	case *annotations.HttpRule_Post:
		return http.MethodPost, p.Post
	case *annotations.HttpRule_Put:
		return http.MethodPut, p.Put
	case *annotations.HttpRule_Delete:
		return http.MethodDelete, p.Delete
	case *annotations.HttpRule_Patch:
		return http.MethodPatch, p.Patch
	}
	return "", ""
}

// ruleVar is a path variable in a rule ({urn}, {name=x/*}) or a ServeMux
// pattern ({id}, {$}).
var ruleVar = regexp.MustCompile(`\{[^}]*\}`)

// concrete is a request path for a rule or pattern: each variable "x1".
func concrete(path string) string {
	return ruleVar.ReplaceAllString(strings.TrimSuffix(path, "{$}"), "x1")
}

// rpcCall is a call the recorder saw: its full method name and whether it
// came through grpc-gateway's mux, which adds x-forwarded-host to every
// call it makes (runtime.AnnotateContext); the hand-written handlers'
// calls do not carry it.
type rpcCall struct {
	method     string
	viaGateway bool
}

func (c rpcCall) String() string {
	if c.viaGateway {
		return c.method + " (through grpc-gateway)"
	}
	return c.method
}

// rpcRecorder is every service at once: a gRPC server that knows no
// service, so each call lands in its unknown-service handler, which notes
// it and answers Unimplemented.
type rpcRecorder struct {
	mu    sync.Mutex
	calls []rpcCall
}

func (r *rpcRecorder) handle(_ any, stream grpc.ServerStream) error {
	m, _ := grpc.MethodFromServerStream(stream)
	md, _ := metadata.FromIncomingContext(stream.Context())
	r.mu.Lock()
	r.calls = append(r.calls, rpcCall{method: m, viaGateway: len(md.Get("x-forwarded-host")) > 0})
	r.mu.Unlock()
	return status.Error(codes.Unimplemented, "recorded")
}

// take returns the calls since the last take.
func (r *rpcRecorder) take() []rpcCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

// ruleEnv is the gateway's route table with every group configured at its
// canonical prefix (the one the rules are written for), every service the
// recorder, and a bearer token "good" that carries every role scope.
type ruleEnv struct {
	h     http.Handler
	table []string // the route table's patterns
	rpcs  *rpcRecorder
}

// tableMux is a ServeMux that lists its patterns. edit, when set, says
// under which patterns a route of the table is registered instead (none:
// the route is gone), to show the checks a drifted table.
type tableMux struct {
	mux      *http.ServeMux
	patterns []string
	edit     func(pattern string) []string
}

func (m *tableMux) Handle(pattern string, h http.Handler) {
	ps := []string{pattern}
	if m.edit != nil {
		ps = m.edit(pattern)
	}
	for _, p := range ps {
		m.patterns = append(m.patterns, p)
		m.mux.Handle(p, h)
	}
}

func (m *tableMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(h))
}

func newRuleEnv(t *testing.T, edit func(pattern string) []string) *ruleEnv {
	t.Helper()
	rec := &rpcRecorder{}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.UnknownServiceHandler(rec.handle))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	cc, err := rpcclient.Dial(lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	up := Upstreams{MDR: cc, Auth: cc, Upload: cc, Broker: cc}
	cfg := defaultConfig(t, "-auth-addr", "x", "-upload-addr", "x", "-broker-addr", "x", "-insecure-plaintext",
		"-mdr-prefix", routes.CanonicalMDRPrefix, "-auth-prefix", routes.CanonicalAuthPrefix, "-broker-prefix", routes.CanonicalBrokerPrefix,
		"-mdr-cache-ttl", "0")
	v := stubVerifier{ids: map[string]identity.Identity{
		"good": {Subject: "42", Client: "c1", Scopes: []string{"openid", identity.ScopeUserSearch, identity.ScopeResearcher}},
	}}
	table := &tableMux{mux: http.NewServeMux(), edit: edit}
	if _, err := routeTable(t.Context(), table, nil, cfg, up, v, slog.New(slog.DiscardHandler), nil); err != nil {
		t.Fatal(err)
	}
	return &ruleEnv{h: table.mux, table: table.patterns, rpcs: rec}
}

// do sends what a client of the JSON groups sends: the bearer token and,
// for a write, an empty JSON object. It returns the status and the calls
// the request made.
func (e *ruleEnv) do(method, path string) (int, []rpcCall) {
	e.rpcs.take()
	var body *strings.Reader
	if method != http.MethodGet && method != http.MethodHead && method != http.MethodDelete {
		body = strings.NewReader("{}")
	}
	var req *http.Request
	if body != nil {
		req = httptest.NewRequest(method, path, body)
		req.Header.Set("Content-Type", "application/json")
	} else {
		req = httptest.NewRequest(method, path, nil)
	}
	req.Header.Set("Authorization", "Bearer good")
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return rec.Code, e.rpcs.take()
}

// checkBindingsServed reports every HTTP rule whose method and path do not
// reach its RPC through the gateway: a rule the route table does not
// serve, which clients would find a 404.
func checkBindingsServed(e *ruleEnv, bindings []httpBinding) []string {
	var problems []string
	for _, b := range bindings {
		code, calls := e.do(b.method, concrete(b.path))
		// Through grpc-gateway: so a hand-written route in its place is
		// noticed, and so is grpc-gateway no longer marking its calls,
		// which checkRoutesAnnotated relies on.
		if !slices.Contains(calls, rpcCall{method: b.rpc, viaGateway: true}) {
			problems = append(problems, "the rule "+b.String()+" is not served through grpc-gateway by the gateway's route table: "+
				http.StatusText(code)+", calls "+fmt.Sprint(calls))
		}
	}
	return problems
}

// ruleAliases are routes that serve an annotated RPC under a path other
// than its rule's, on purpose: the key's request reaches the value's rule.
var ruleAliases = map[string]string{
	// The Samply auth client looks for discovery below the prefix.
	"GET " + routes.CanonicalAuthPrefix + routes.DiscoveryPath: "GET " + routes.DiscoveryPath,
}

// forwardingPrefix reports whether path lies where the groups that forward
// to grpc-gateway live (the prefixes their rules are written for).
func forwardingPrefix(path string) bool {
	for _, p := range []string{routes.CanonicalAuthPrefix, routes.CanonicalMDRPrefix, routes.ResearcherPath(routes.CanonicalBrokerPrefix), routes.DiscoveryPath} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// checkRoutesAnnotated reports every route of the table (each method it
// serves) that reaches an RPC through grpc-gateway other than the one
// whose rule names its method and path, or, below a forwarding group's
// prefix, reaches no service at all and answers 404, 405 or 501: what
// grpc-gateway's mux answers a route forwarded to it without a rule.
// Subtree patterns (ending in /) are catch-alls, not forwarded routes;
// elsewhere (the banks' API, the upload, operations endpoints) a route may
// answer what it likes without a service.
func checkRoutesAnnotated(e *ruleEnv, bindings []httpBinding) []string {
	annotated := map[string]httpBinding{} // rpc -> a binding
	byTarget := map[string]httpBinding{}  // "METHOD /path/{}" -> binding
	norm := func(method, path string) string {
		return method + " " + ruleVar.ReplaceAllString(strings.TrimSuffix(path, "{$}"), "{}")
	}
	for _, b := range bindings {
		annotated[b.rpc] = b
		byTarget[norm(b.method, b.path)] = b
	}
	var problems []string
	for _, pattern := range e.table {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok {
			method, path = "", pattern
		}
		if strings.HasSuffix(path, "/") {
			continue
		}
		ms := []string{method}
		if method == "" {
			// A pattern for every method answers the ones it does not
			// serve with 405 and Allow.
			req := httptest.NewRequest(http.MethodPatch, concrete(path), nil)
			rec := httptest.NewRecorder()
			e.h.ServeHTTP(rec, req)
			ms = nil
			for m := range strings.SplitSeq(rec.Header().Get("Allow"), ",") {
				if m = strings.TrimSpace(m); m != "" && m != http.MethodHead {
					ms = append(ms, m)
				}
			}
			if len(ms) == 0 {
				problems = append(problems, "the route "+pattern+" lists no methods it serves")
			}
		}
		for _, m := range ms {
			code, calls := e.do(m, concrete(path))
			route := norm(m, path)
			if alias, ok := ruleAliases[strings.TrimSuffix(m+" "+path, "{$}")]; ok {
				route = alias
			}
			reached := false
			for _, c := range calls {
				if !c.viaGateway {
					continue // a hand-written handler's call
				}
				reached = true
				if b, ok := byTarget[route]; !ok || b.rpc != c.method {
					problems = append(problems, "the route "+m+" "+path+" reaches "+c.method+" through grpc-gateway, whose rule is "+annotated[c.method].String())
				}
			}
			if !reached && len(calls) == 0 && forwardingPrefix(path) && (code == http.StatusNotFound || code == http.StatusMethodNotAllowed || code == http.StatusNotImplemented) {
				problems = append(problems, "the route "+m+" "+path+" answers "+http.StatusText(code)+" and calls no service: "+
					"it forwards to grpc-gateway without an HTTP rule for it in the protos")
			}
		}
	}
	return problems
}

// TestHTTPRulesAreServed fails when an RPC's HTTP rule (a new RPC with a
// google.api.http option, say) is not served by the gateway's route table.
func TestHTTPRulesAreServed(t *testing.T) {
	e := newRuleEnv(t, nil)
	bindings := httpBindings(t)
	if len(bindings) < 30 {
		t.Fatalf("only %d HTTP rules in the protos: are the fris.*.v1 descriptors registered?", len(bindings))
	}
	for _, p := range checkBindingsServed(e, bindings) {
		t.Error(p)
	}
}

// TestRoutesHaveHTTPRules fails when a route of the table forwards to
// grpc-gateway's mux without an HTTP rule for its method and path (grpc-
// gateway answers it 404), or reaches an RPC under another rule's path.
func TestRoutesHaveHTTPRules(t *testing.T) {
	e := newRuleEnv(t, nil)
	for _, p := range checkRoutesAnnotated(e, httpBindings(t)) {
		t.Error(p)
	}
}

// TestHTTPRuleChecksCanFail shows the checks what a drifted tree would
// give them: a rule no route serves (a new annotated RPC), a rule whose
// route is gone, and a route forwarded to grpc-gateway without a rule.
func TestHTTPRuleChecksCanFail(t *testing.T) {
	bindings := httpBindings(t)
	const members = "GET " + routes.CanonicalMDRPrefix + "/records/{urn}/members"
	const slots = "GET " + routes.CanonicalMDRPrefix + "/records/{urn}/slots"

	e := newRuleEnv(t, nil)
	extra := httpBinding{rpc: "/fris.mdr.v1.MdrService/GetRecordSlots", method: http.MethodGet, path: routes.CanonicalMDRPrefix + "/records/{urn}/slots"}
	if p := checkBindingsServed(e, append(bindings, extra)); len(p) != 1 || !strings.Contains(p[0], "GetRecordSlots") {
		t.Errorf("a rule no route serves: %q", p)
	}

	gone := newRuleEnv(t, func(p string) []string {
		if p == members {
			return nil
		}
		return []string{p}
	})
	if p := checkBindingsServed(gone, bindings); len(p) != 1 || !strings.Contains(p[0], "GetRecordMembers") {
		t.Errorf("a rule whose route is gone: %q", p)
	}

	unruled := newRuleEnv(t, func(p string) []string {
		if p == members {
			return []string{p, slots}
		}
		return []string{p}
	})
	if p := checkRoutesAnnotated(unruled, bindings); len(p) != 1 || !strings.Contains(p[0], "/records/{urn}/slots") {
		t.Errorf("a route forwarded without a rule: %q", p)
	}
}
