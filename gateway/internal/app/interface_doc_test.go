package app

import (
	"bufio"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
)

// interfaceDoc is the public interface as a clone's reader finds it.
const interfaceDoc = "../../../docs/interface.md"

// docRoute is one row of a route table in interfaceDoc: a method and a
// path with {placeholders}, prefixes at their defaults.
type docRoute struct{ method, path string }

var (
	docMethod      = regexp.MustCompile(`^(GET|POST|PUT|DELETE)$`)
	docPath        = regexp.MustCompile("^`(/[^`?\\s]*)")
	docPlaceholder = regexp.MustCompile(`\{[^}]*\}`)
)

// docRoutes reads every table row whose first cell is a method (or several,
// comma-separated) and whose second cell starts with a backticked path.
func docRoutes(t *testing.T) []docRoute {
	t.Helper()
	f, err := os.Open(interfaceDoc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docRoute
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cells := strings.Split(sc.Text(), "|")
		if len(cells) < 4 || strings.TrimSpace(cells[0]) != "" {
			continue
		}
		m := docPath.FindStringSubmatch(strings.TrimSpace(cells[2]))
		if m == nil {
			continue
		}
		for _, method := range strings.Split(cells[1], ",") {
			if method = strings.TrimSpace(method); docMethod.MatchString(method) {
				out = append(out, docRoute{method, m[1]})
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// patternRecorder lists what the gateway registers.
type patternRecorder []string

func (p *patternRecorder) Handle(pattern string, _ http.Handler) { *p = append(*p, pattern) }
func (p *patternRecorder) HandleFunc(pattern string, _ func(http.ResponseWriter, *http.Request)) {
	*p = append(*p, pattern)
}

// docEnv is the gateway with default flags and every group configured,
// each service a gRPC server that implements nothing: a routed request
// reaches it and gets 501 (or the gateway's own 400/401/403), an unrouted
// one 404 or 405 from the gateway.
func docEnv(t *testing.T) (Config, Upstreams) {
	t.Helper()
	cc, _ := serve(t, func(*grpc.Server) {})
	cfg := defaultConfig(t, "-auth-addr", "x", "-upload-addr", "x", "-broker-addr", "x", "-insecure-plaintext")
	return cfg, Upstreams{MDR: cc, Auth: cc, Upload: cc, Broker: cc}
}

// TestInterfaceDocListsEveryRoute fails when a pattern of the gateway's
// route table is missing from docs/interface.md.
func TestInterfaceDocListsEveryRoute(t *testing.T) {
	cfg, up := docEnv(t)
	var table patternRecorder
	if _, err := routeTable(t.Context(), &table, nil, cfg, up, stubVerifier{}, slog.New(slog.DiscardHandler), nil); err != nil {
		t.Fatal(err)
	}
	doc := docRoutes(t)
	if len(table) < 40 || len(doc) < 40 {
		t.Fatalf("%d patterns in the table and %d routes in %s: the table or the doc's format changed", len(table), len(doc), interfaceDoc)
	}
	norm := func(p string) string { return docPlaceholder.ReplaceAllString(p, "{}") }
	for _, pattern := range table {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok {
			method, path = "", pattern
		}
		subtree := strings.HasSuffix(path, "/")
		path = norm(strings.TrimSuffix(path, "{$}"))
		found := false
		for _, d := range doc {
			if method != "" && d.method != method {
				continue
			}
			if p := norm(d.path); p == path || subtree && strings.HasPrefix(p, path) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("the gateway serves %q, which %s does not list", pattern, interfaceDoc)
		}
	}
}

// TestInterfaceDocRoutesAreServed fails when docs/interface.md lists a
// method and path the gateway does not serve: sent through the whole
// handler, each must be routed (not 404 or 405).
func TestInterfaceDocRoutesAreServed(t *testing.T) {
	cfg, up := docEnv(t)
	h, err := Handler(t.Context(), cfg, up, stubVerifier{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docRoutes(t) {
		target := docPlaceholder.ReplaceAllString(d.path, "x1")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(d.method, target, nil))
		if rec.Code == http.StatusNotFound || rec.Code == http.StatusMethodNotAllowed {
			t.Errorf("%s %s (listed as %s): %d %s", d.method, target, d.path, rec.Code, strings.TrimSpace(rec.Body.String()))
		}
	}
}
