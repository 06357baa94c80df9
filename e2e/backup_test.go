package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"fris.dev/pkg/testredis"
)

// storeServices are the four services, each with an embedded store.
var storeServices = []string{"mdr", "auth", "upload", "broker"}

// TestBackupRestore is the README's procedure, "Backup and restore": data
// written through the gateway (a patient document, a user who signs in, a
// bank with its token, the registry), a backup of every service's store
// with its CLI while uploads go on, everything stopped, the data
// directory wiped, each backup restored, everything started again: the
// document is byte for byte the same, the user signs in, the bank's token
// and a token signed before the backup work, and the registry is there
// without a new import.
func TestBackupRestore(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	secret := NewKeySecret(t)
	opts := Options{
		MDRArgs:    []string{"-data-dir", data},
		AuthArgs:   []string{"-data-dir", data, "-key-secrets", secret},
		UploadArgs: []string{"-data-dir", data},
		BrokerArgs: []string{"-data-dir", data, "-name", brokerName, "-registration", "approval"},
	}
	s := NewStack(t, opts)
	seedAuth(t, s)
	seedSites(t, s)
	doc := patientDoc("BR-1", "Patient", "\n  <!-- Grüße, kept byte for byte -->")
	upText(t, s, http.MethodPut, charite.spec()+"/pats/BR-1", doc, 201, charite.xml()...)
	access, _ := researcherToken(t, s, demoEmail, demoPass)
	b := registerBank(t, s, "bank@backup.example")
	s.BrokerCLI(t, 0, "approve-bank", "-site", "charite", b.email)
	wantText(t, s, http.MethodGet, sb+"/banks/"+b.email+"/status", nil, 200, b.auth()...)

	// Uploads go on while the backups are taken: the service keeps
	// serving, and each copy is whole whatever it caught.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var during []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id := fmt.Sprintf("BR-during-%03d", i)
			res, body := s.Do(t, http.MethodPut, charite.spec()+"/pats/"+id, strings.NewReader(patientDoc(id, "Patient", "")), charite.xml()...)
			if res.StatusCode != 201 {
				t.Errorf("upload %s during the backups = %d: %s", id, res.StatusCode, body)
				return
			}
			mu.Lock()
			during = append(during, id)
			mu.Unlock()
		}
	}()
	backups := t.TempDir()
	line := regexp.MustCompile(`(?m)^(\S+)\t(\d+) bytes\tsha256 [0-9a-f]{64}\t(\w+)\.db at transaction \d+$`)
	for _, svc := range storeServices {
		out := filepath.Join(backups, svc+".db")
		got := cli(t, svc, s.addr(svc), 0, "backup", "-out", out)
		m := line.FindStringSubmatch(got)
		if m == nil || m[1] != out || m[3] != svc {
			t.Fatalf("%s backup printed %q", svc, got)
		}
		if st, err := os.Stat(out); err != nil || strconv.FormatInt(st.Size(), 10) != m[2] || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s backup file: %v, %v; want %s bytes, mode 0600", svc, st, err, m[2])
		}
	}
	close(stop)
	wg.Wait()
	uploadedBefore := len(during)

	t.Run("Refusals", func(t *testing.T) {
		out := filepath.Join(backups, "upload.db")
		wantContains(t, cli(t, "upload", s.UploadAddr, 1, "backup", "-out", out), "exists: -force replaces it")
		// The admin API admits the operator's certificate only.
		for _, cert := range []string{"gateway", "upload"} {
			got := cli(t, "upload", s.UploadAddr, 1, append([]string{"backup", "-out", filepath.Join(backups, "as-"+cert+".db")}, tlsArgs(cert)...)...)
			wantContains(t, got, "permission denied")
		}
		got := restoreCLI(t, "upload", 1, "-data-dir", data, "-force", out)
		wantContains(t, got, "in use (a running upload service holds it): stop the service first")
		notes := filepath.Join(backups, "notes.txt")
		if err := os.WriteFile(notes, []byte(strings.Repeat("not a store\n", 1000)), 0o600); err != nil {
			t.Fatal(err)
		}
		wantContains(t, restoreCLI(t, "upload", 1, "-data-dir", t.TempDir(), notes), "not a store file")
	})

	// Stopped, wiped, restored.
	for _, p := range []*proc{s.Gateway, s.Upload, s.Broker, s.Auth, s.MDR} {
		if err := p.stop(t); err != nil {
			t.Fatalf("%s exit: %v", p.name, err)
		}
	}
	if err := os.RemoveAll(data); err != nil {
		t.Fatal(err)
	}
	for _, svc := range storeServices {
		got := restoreCLI(t, svc, 0, "-data-dir", data, filepath.Join(backups, svc+".db"))
		wantContains(t, got, filepath.Join(data, svc+".db"))
	}

	opts.NoDemo = true // the registry must come back from the backup
	s2 := NewStack(t, opts)
	if got := storedDoc(t, s2, charite, "BR-1"); got != doc {
		t.Fatalf("the restored document differs:\n%q\nwant\n%q", got, doc)
	}
	s2.Get(t, oauth+"/userinfo", 200, "Authorization", "Bearer "+access)
	researcherToken(t, s2, demoEmail, demoPass)
	wantText(t, s2, http.MethodGet, sb+"/banks/"+b.email+"/status", nil, 200, b.auth()...)
	_, body := s2.Get(t, "/v3/api/mdr/namespaces", 200)
	wantContains(t, string(body), "mdr16")
	// Each upload made during the backups is in the copy whole or not at
	// all, and those made before the upload backup began are in it.
	n, err := strconv.Atoi(count(t, s2, charite))
	if err != nil {
		t.Fatal(err)
	}
	if n < 1 || n > 1+uploadedBefore {
		t.Fatalf("the restored upload store holds %d of charite's patients, want 1 to %d", n, 1+uploadedBefore)
	}
	for _, id := range during[:n-1] {
		if got := storedDoc(t, s2, charite, id); got != patientDoc(id, "Patient", "") {
			t.Fatalf("patient %s uploaded during the backups: restored as %q", id, got)
		}
	}
	t.Logf("%d uploads during the backups, %d of them in the upload backup", uploadedBefore, n-1)
}

// TestBackupOfRedisStore: a service on Redis refuses the backup and names
// Redis's own persistence.
func TestBackupOfRedisStore(t *testing.T) {
	t.Parallel()
	url := testredis.URL(t)
	mdr := start(t, "mdr", "serve", "-grpc-addr", "127.0.0.1:0", "-ops-addr", "", "-store", "redis", "-redis-url", url, "-redis-prefix", testredis.Prefix(t))
	out := filepath.Join(t.TempDir(), "mdr.db")
	got := cli(t, "mdr", mdr.addrs["grpc"], 1, "backup", "-out", out)
	wantContains(t, got, "failed precondition")
	wantContains(t, got, "redis-cli --rdb")
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a file was written: %v", err)
	}
}

// addr is the gRPC address of the named service.
func (s *Stack) addr(svc string) string {
	return map[string]string{"mdr": s.MDRAddr, "auth": s.AuthAddr, "upload": s.UploadAddr, "broker": s.BrokerAddr}[svc]
}

// restoreCLI runs `<bin> restore args...` and checks its exit code (0 or
// non-zero as wanted); it returns the combined output.
func restoreCLI(t *testing.T, bin string, wantExit int, args ...string) string {
	t.Helper()
	code, out := runExit(t, bin, append([]string{"restore"}, args...)...)
	if (wantExit == 0) != (code == 0) {
		t.Fatalf("%s restore %v exited %d, want %d:\n%s", bin, args, code, wantExit, out)
	}
	return out
}
