package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeGateway answers /ok with a fixed JSON body, and /flaky with it only
// once (the capture), then 503.
func fakeGateway(t *testing.T) *httptest.Server {
	t.Helper()
	var flaky atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch r.URL.Path {
		case "/ok":
		case "/flaky":
			if flaky.Add(1) > 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
		default:
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"totalcount":1}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func runBench(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	rc := run(context.Background(), args, &out, &errb)
	return rc, out.String(), errb.String()
}

func TestRunReportsBothTargets(t *testing.T) {
	gw := fakeGateway(t)
	js := filepath.Join(t.TempDir(), "out.json")
	rc, out, errs := runBench(t, "-gateway", gw.URL, "-connections", "4", "-duration", runWindow, "-warmup", "100ms",
		"-json", js, "-watch", "self="+strconv.Itoa(os.Getpid()), "/ok")
	if rc != 0 {
		t.Fatalf("rc %d\n%s\n%s", rc, out, errs)
	}
	for _, want := range []string{"| `/ok` | baseline |", "| `/ok` | gateway |", "Targets:", "CPU time"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	var rep Report
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 || len(rep.Pairs) != 1 {
		t.Fatalf("results %d, pairs %d", len(rep.Results), len(rep.Pairs))
	}
	for _, m := range rep.Results {
		if m.Requests == 0 || m.Errors != 0 || m.ReqPerSec <= 0 || m.BytesInMean != float64(len(`{"totalcount":1}`)) {
			t.Errorf("%s: %+v", m.Target, m)
		}
	}
	if rep.Pairs[0].Ratio <= 0 {
		t.Errorf("ratio %v", rep.Pairs[0].Ratio)
	}
}

func TestRunFailsOnErrorResponses(t *testing.T) {
	gw := fakeGateway(t)
	rc, out, errs := runBench(t, "-gateway", gw.URL, "-connections", "2", "-duration", "200ms", "-warmup", "0s", "/flaky")
	if rc != 1 {
		t.Fatalf("rc %d, want 1\n%s\n%s", rc, out, errs)
	}
	if !strings.Contains(errs, "status 503") {
		t.Errorf("stderr does not name the error:\n%s", errs)
	}
}

func TestRunFailsWhenCaptureFails(t *testing.T) {
	gw := fakeGateway(t)
	if rc, _, errs := runBench(t, "-gateway", gw.URL, "-duration", "100ms", "/missing"); rc != 1 || !strings.Contains(errs, "404") {
		t.Fatalf("rc %d, want 1\n%s", rc, errs)
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{}, // no path
		{"-gateway", "http://10.0.0.1:8080", "/x"}, // not loopback
		{"-connections", "0", "/x"},
		{"x"},
	} {
		if rc, _, _ := runBench(t, args...); rc != 2 {
			t.Errorf("%q: rc %d, want 2", args, rc)
		}
	}
}

func TestBaselineServesCapturedBytes(t *testing.T) {
	body := []byte(strings.Repeat("x", 5000))
	b, err := startBaseline([]page{{path: "/a/urn:x:1", contentType: "application/json; charset=utf-8", body: body}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	pg, err := capture(context.Background(), b.URL+"/a/urn:x:1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pg.body, body) || pg.contentType != "application/json; charset=utf-8" {
		t.Fatalf("got %q, %d bytes", pg.contentType, len(pg.body))
	}
	if _, err := capture(context.Background(), b.URL+"/other", nil); err == nil {
		t.Fatal("unknown path answered 200")
	}
}
