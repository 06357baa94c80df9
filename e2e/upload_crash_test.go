package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/rpcclient"
	uploadv1 "fris.dev/proto/upload/v1"
)

// TestUploadSurvivesSIGKILL kills the upload service in the middle of a
// stream of uploads: every acknowledged upload must be there afterwards,
// byte for byte, and nothing stored may be half-written.
func TestUploadSurvivesSIGKILL(t *testing.T) {
	// Not parallel: it restarts upload on the address it had, which a parallel test's listener could take while it is down.
	dir := t.TempDir()
	s := NewStack(t, Options{UploadArgs: []string{"-data-dir", dir, "-validation", "off"}})
	seedSites(t, s)
	sent := sync.Map{} // id -> document
	var acked sync.Map
	var n, ok atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 5 * time.Second}
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("K-%d-%05d", w, i)
				doc := patientDoc(id, "Patient", strings.Repeat(`<c:Case id="pad"/>`, i%50))
				sent.Store(id, doc)
				n.Add(1)
				req, _ := http.NewRequest(http.MethodPut, s.URL+charite.spec()+"/pats/"+id, strings.NewReader(doc))
				req.Header.Set("Authorization", basic(charite.user, charite.pass))
				req.Header.Set("Content-Type", "application/xml")
				res, err := client.Do(req)
				if err != nil {
					continue
				}
				res.Body.Close()
				if res.StatusCode == 201 || res.StatusCode == 200 {
					acked.Store(id, doc)
					ok.Add(1)
				}
			}
		}(w)
	}
	// Let uploads flow, then kill mid-stream.
	deadline := time.Now().Add(10 * time.Second)
	for ok.Load() < 200 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Upload.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.Upload.done
	time.Sleep(200 * time.Millisecond) // uploads keep failing while it is down
	close(stop)
	wg.Wait()
	if ok.Load() < 200 {
		t.Fatalf("only %d uploads acknowledged before the kill", ok.Load())
	}
	t.Logf("%d uploads sent, %d acknowledged before SIGKILL", n.Load(), ok.Load())

	// Restart on the same data and address; the gateway reconnects.
	s.Upload = start(t, "upload", "serve", "-grpc-addr", s.UploadAddr, "-ops-addr", "127.0.0.1:0", "-log-level", "debug",
		"-argon2-memory-kib", "1024", "-data-dir", dir, "-validation", "off")
	cc, err := rpcclient.Dial(s.UploadAddr, dialAs(t, "admin"))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	admin := uploadv1.NewUploadAdminClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	teiler := &uploadv1.Teiler{SiteId: charite.id, TeilerId: charite.teiler}
	missing := 0
	acked.Range(func(k, v any) bool {
		res, err := admin.GetPatient(ctx, &uploadv1.GetPatientRequest{Teiler: teiler, PatientId: k.(string)})
		if err != nil {
			t.Errorf("acknowledged %s is gone: %v", k, err)
			missing++
			return missing < 5
		}
		if string(res.GetDocument()) != v.(string) || int(res.GetSummary().GetSizeBytes()) != len(v.(string)) {
			t.Errorf("acknowledged %s differs after the restart", k)
		}
		return true
	})
	// Whatever else is stored (in flight at the kill) is complete too.
	var stored int
	tok := ""
	for {
		page, err := admin.ListPatients(ctx, &uploadv1.ListPatientsRequest{Teiler: teiler, PageToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range page.GetPatients() {
			stored++
			want, ok := sent.Load(p.GetPatientId())
			if !ok {
				t.Fatalf("stored %s was never sent", p.GetPatientId())
			}
			res, err := admin.GetPatient(ctx, &uploadv1.GetPatientRequest{Teiler: teiler, PatientId: p.GetPatientId()})
			if err != nil || string(res.GetDocument()) != want.(string) {
				t.Fatalf("stored %s is not the document sent: %v", p.GetPatientId(), err)
			}
		}
		if tok = page.GetNextPageToken(); tok == "" {
			break
		}
	}
	if int64(stored) < ok.Load() {
		t.Fatalf("%d stored, fewer than the %d acknowledged", stored, ok.Load())
	}
	// And the service takes uploads again through the same gateway.
	eventuallyStatus(t, s, http.MethodPut, charite.spec()+"/pats/AFTER", patientDoc("AFTER", "Patient", ""), 201, charite.xml()...)
	if _, err := admin.GetPatient(ctx, &uploadv1.GetPatientRequest{Teiler: teiler, PatientId: "nobody"}); status.Code(err) != codes.NotFound {
		t.Fatalf("unknown patient: %v", err)
	}
}

// eventuallyStatus repeats a request until it gets the status (a restarted
// service takes a moment to be reconnected).
func eventuallyStatus(t *testing.T, s *Stack, method, path, body string, want int, headers ...string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		res, b := s.Do(t, method, path, strings.NewReader(body), headers...)
		if res.StatusCode == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s = %d, want %d: %s", method, path, res.StatusCode, want, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
