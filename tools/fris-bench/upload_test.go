package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const benchPatient = "testdata/patient.xml"

func TestUploadDoc(t *testing.T) {
	template, err := os.ReadFile(benchPatient)
	if err != nil {
		t.Fatal(err)
	}
	d, err := newUploadDoc(template, 5000)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"B1-00000001", "B1234567890-00000002"} {
		b := d.with(id)
		if len(b) < 5000 || len(b) > 5200 {
			t.Errorf("%s: %d bytes, want about 5,000", id, len(b))
		}
		var root struct {
			XMLName xml.Name
			ID      string `xml:"id,attr"`
			Cases   []struct {
				Attrs []struct {
					Key string `xml:"MdrKey"`
				} `xml:"Attribute"`
			} `xml:"Case"`
		}
		if err := xml.Unmarshal(b, &root); err != nil {
			t.Fatalf("%s: not well-formed: %v", id, err)
		}
		if root.XMLName.Local != "Patient" || root.ID != id {
			t.Errorf("root %s id %q, want Patient id %q", root.XMLName.Local, root.ID, id)
		}
		last := bytes.LastIndex(b, []byte("</ns7:Case>"))
		pad := []byte(`<Value xmlns="http://schema.samply.de/ccp/Value">EV-`)
		if n := bytes.Count(b[:last], pad); n == 0 || n != bytes.Count(b, pad) {
			t.Errorf("%d padding attributes, not all in the last case", n)
		}
		if len(root.Cases) == 0 {
			t.Error("no case")
		}
	}
	if _, err := newUploadDoc([]byte(`<x id="1"/>`), 5000); err == nil {
		t.Error("a document without a Patient root was taken as a template")
	}
}

// fakeUploads answers PUT .../pats/{id} like the gateway: 201 for a new id
// whose document carries that id, 200 for a known one, 401 without the
// credentials. failAll answers 500 to everything.
func fakeUploads(t *testing.T, failAll bool) (*httptest.Server, func() int) {
	t.Helper()
	const prefix = "/dktk/sites/bench_teiler/teiler1/pats/"
	var mu sync.Mutex
	seen := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id, ok := strings.CutPrefix(r.URL.Path, prefix)
		user, pass, basic := r.BasicAuth()
		switch {
		case failAll:
			http.Error(w, "store down", http.StatusInternalServerError)
		case r.Method != http.MethodPut || !ok:
			http.NotFound(w, r)
		case !basic || user != "bench-teiler1" || pass != "pw-0123456789":
			w.WriteHeader(http.StatusUnauthorized)
		case r.Header.Get("Content-Type") != "application/xml" || !bytes.Contains(body, []byte(`:Patient `)) ||
			!bytes.Contains(body, []byte(` id="`+id+`"`)):
			http.Error(w, "id mismatch", http.StatusBadRequest)
		default:
			mu.Lock()
			known := seen[id]
			seen[id] = true
			mu.Unlock()
			if known {
				w.WriteHeader(http.StatusOK)
				return
			}
			w.WriteHeader(http.StatusCreated)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() int { mu.Lock(); defer mu.Unlock(); return len(seen) }
}

func uploadArgs(gw, dir string) []string {
	return []string{"-gateway", gw, "-suites", "upload", "-upload-password", "pw-0123456789",
		"-upload-template", benchPatient, "-upload-clients", "4", "-upload-duration", runWindow, "-warmup", "100ms",
		"-fsync-dir", dir, "-fsync-duration", "50ms", "-json", filepath.Join(dir, "out.json")}
}

func TestUploadSuite(t *testing.T) {
	gw, patients := fakeUploads(t, false)
	dir := t.TempDir()
	rc, out, errs := runBench(t, uploadArgs(gw.URL, dir)...)
	if rc != 0 {
		t.Fatalf("rc %d\n%s\n%s", rc, out, errs)
	}
	// The device-flush reading appears only when something flushed the
	// disk meanwhile (the fake server never does, but tests of other
	// packages running in parallel may), so it is not asserted either way.
	for _, want := range []string{"Durable patient uploads (suite upload, bolt store)", "| before |", "| after |", "Target: at least 5 uploads per fsync",
		"Uploads per fsync by reading (target 5): ", "uploads/s ÷ the disk's plain fdatasync/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// No -upload-metrics: the store's commits are not known, so there is
	// no such reading.
	if strings.Contains(out, "per store commit") {
		t.Errorf("a store-commit reading without -upload-metrics:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "out.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	u := rep.Upload
	if u == nil || u.Result == nil {
		t.Fatalf("no upload report: %s", b)
	}
	m := u.Result
	// Every upload was a new patient (no 200): the ids are unique.
	if m.Units == 0 || m.Errors != 0 || m.WarmupErrors != 0 || int(m.Requests) > patients() {
		t.Errorf("units %d, errors %d+%d, requests %d, distinct patients %d", m.Units, m.Errors, m.WarmupErrors, m.Requests, patients())
	}
	if u.DocBytes < 5000 || len(u.DiskSyncs) != 2 || u.PlainFsyncPerSec <= 0 || u.UploadsPerPlainSync <= 0 {
		t.Errorf("doc %d bytes, syncs %+v, plain %v, ratio %v", u.DocBytes, u.DiskSyncs, u.PlainFsyncPerSec, u.UploadsPerPlainSync)
	}
	if entries, _ := filepath.Glob(filepath.Join(dir, "fris-bench-fsync-*")); len(entries) != 0 {
		t.Errorf("sync files left behind: %v", entries)
	}
}

func TestUploadSuiteFailsOnErrorResponses(t *testing.T) {
	gw, _ := fakeUploads(t, true)
	rc, out, errs := runBench(t, uploadArgs(gw.URL, t.TempDir())...)
	if rc != 1 || !strings.Contains(errs, "status 500") {
		t.Fatalf("rc %d, want 1 naming the status\n%s\n%s", rc, out, errs)
	}
	if !strings.Contains(out, "not met") {
		t.Errorf("an error run is reported as met:\n%s", out)
	}
}

func TestUploadFlags(t *testing.T) {
	t.Setenv(envSitePassword, "")
	if rc, _, errs := runBench(t, "-suites", "upload"); rc != 2 || !strings.Contains(errs, "-upload-password") {
		t.Errorf("rc %d without a password, want 2\n%s", rc, errs)
	}
	if rc, _, _ := runBench(t, "-suites", "upload", "-upload-password", "x", "-upload-clients", "0"); rc != 2 {
		t.Errorf("rc %d with 0 clients, want 2", rc)
	}
}

// With -upload-sites the uploads go round robin to site i with user i, so
// every site gets its share and each carries its own credentials.
func TestUploadSuiteSpreadsOverSites(t *testing.T) {
	var mu sync.Mutex
	perSite := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, "/dktk/sites/bench-")
		site, _, ok2 := strings.Cut(rest, "_teiler/teiler1/pats/")
		user, pass, _ := r.BasicAuth()
		if !ok || !ok2 || user != "bench-teiler1-"+site || pass != "pw-0123456789" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mu.Lock()
		perSite[site]++
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	rc, out, errs := runBench(t, append(uploadArgs(srv.URL, t.TempDir()), "-upload-sites", "5")...)
	if rc != 0 {
		t.Fatalf("rc %d\n%s\n%s", rc, out, errs)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(perSite) != 5 {
		t.Fatalf("sites reached: %v, want bench-1..5", perSite)
	}
	for site, n := range perSite {
		// Round robin: no site lags more than the clients in flight.
		for other, m := range perSite {
			if n-m > 4+1 {
				t.Errorf("site %s got %d uploads, site %s %d", site, n, other, m)
			}
		}
	}
	if !strings.Contains(out, "5 site(s) round robin") {
		t.Errorf("report does not name the sites:\n%s", out)
	}
	if rc, _, _ := runBench(t, append(uploadArgs(srv.URL, t.TempDir()), "-upload-sites", "0")...); rc != 2 {
		t.Errorf("rc %d with 0 sites, want 2", rc)
	}
}
