package app

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// /metrics is served on the operations port only: the public port answers
// 404 for it, as for any unknown path.
func TestMetricsOnOpsPortOnly(t *testing.T) {
	addrs := runGatewayAddrs(t)
	pub, ops := "http://"+addrs["http"], "http://"+addrs["ops"]
	if addrs["ops"] == "" {
		t.Fatal("no ops address in the listening record")
	}
	// A request on the public port, so its counter has a sample.
	if code, _ := get(t, pub+"/healthz"); code != 200 {
		t.Fatalf("public /healthz = %d, want 200", code)
	}
	if code, _ := get(t, pub+"/metrics"); code != http.StatusNotFound {
		t.Fatalf("public /metrics = %d, want 404", code)
	}
	code, body := get(t, ops+"/metrics")
	if code != 200 || !strings.Contains(body, "fris_http_requests_total") || !strings.Contains(body, "go_goroutines") {
		t.Fatalf("ops /metrics = %d, want 200 with the request and runtime metrics:\n%.500s", code, body)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, _ := get(t, ops+p); code != 200 {
			t.Fatalf("ops %s = %d, want 200", p, code)
		}
	}
}

func TestOpsAddrOff(t *testing.T) {
	addrs := runGatewayAddrs(t, "-ops-addr", "")
	if a, ok := addrs["ops"]; ok {
		t.Fatalf("-ops-addr \"\" listens on %s", a)
	}
	if code, _ := get(t, "http://"+addrs["http"]+"/metrics"); code != http.StatusNotFound {
		t.Fatalf("public /metrics = %d, want 404", code)
	}
}

func TestOpsAddrNotPublic(t *testing.T) {
	cfg := defaultConfig(t, "-addr", "0.0.0.0:8080", "-ops-addr", "0.0.0.0:8080")
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "-ops-addr") {
		t.Fatalf("Validate with -ops-addr = -addr: %v, want an -ops-addr error", err)
	}
}
