package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Failing fast and honestly: a store that cannot answer makes requests
// answer 503 (not the gateway's 504 of a hang) and the service's /readyz 503, a full disk
// answers 507 and shows in readiness, and one service's outage never takes
// the gateway out of service. Each recovers without a restart.

// redisProc is a redis-server of the test's own, which it may stop, freeze
// and restart on the same port. Its AOF (fsync always) keeps the data over a
// kill, as the deployed configuration does.
type redisProc struct {
	port, dir string
	cmd       *exec.Cmd
}

func startRedis(t *testing.T) *redisProc {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server not found; CI must run the Redis fail-fast tests")
		}
		t.Skip("redis-server not found")
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(lis.Addr().(*net.TCPAddr).Port)
	_ = lis.Close()
	r := &redisProc{port: port, dir: t.TempDir()}
	r.start(t)
	t.Cleanup(func() { r.kill() })
	return r
}

func (r *redisProc) url() string { return "redis://127.0.0.1:" + r.port + "/0" }

func (r *redisProc) start(t *testing.T) {
	t.Helper()
	r.cmd = exec.Command("redis-server", "--port", r.port, "--bind", "127.0.0.1", "--dir", r.dir,
		"--save", "", "--appendonly", "yes", "--appendfsync", "always")
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", "127.0.0.1:"+r.port)
		if err == nil {
			_, _ = c.Write([]byte("PING\r\n"))
			buf := make([]byte, 7)
			_ = c.SetReadDeadline(time.Now().Add(time.Second))
			n, _ := io.ReadFull(c, buf)
			_ = c.Close()
			if string(buf[:n]) == "+PONG\r\n" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s did not start: %v", r.port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *redisProc) kill() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Signal(syscall.SIGCONT)
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		r.cmd = nil
	}
}

func (r *redisProc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// timed sends a request and returns its status and how long it took; a
// transport error fails the test (the gateway must answer, not hang up).
func timed(t *testing.T, s *Stack, method, url, body string, headers ...string) (int, time.Duration) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	start := time.Now()
	// The stack's client: its answers, 503 and 507 included, are checked
	// against the API reference too.
	res, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, time.Since(start)
}

// within polls until check returns "" (else the reason), for at most d.
func within(t *testing.T, d time.Duration, what string, check func() string) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		why := check()
		if why == "" {
			return time.Since(start)
		}
		if time.Since(start) > d {
			t.Fatalf("%s: not within %v: %s", what, d, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// groups reads /health/groups: its status and each group's state.
func groups(t *testing.T, s *Stack) (int, map[string]string) {
	t.Helper()
	res, b := s.Do(t, http.MethodGet, "/health/groups", nil)
	var rep struct {
		Up     bool
		Groups []struct{ Group, Service, State, Reason string }
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("/health/groups: %v: %s", err, b)
	}
	out := map[string]string{}
	for _, g := range rep.Groups {
		out[g.Service] = g.State
	}
	return res.StatusCode, out
}

// failFastBound guards against a hang only. The store's outage budget
// (go-redis bounded to 1 s per attempt, one retry) ends a call in about 2 s
// with 503; what proves that it ended the call is the 503, since a call
// that hangs instead ends at the gateway's -upstream-timeout (30 s) with
// 504. The time taken is logged; a tighter bound would fail on a busy
// machine.
const failFastBound = 20 * time.Second

func TestFailFastRedisDown(t *testing.T) {
	// Not parallel: it restarts its Redis on the port it had, which a parallel test's listener could take while it is down.
	r := startRedis(t)
	s := NewStack(t, Options{Redis: true, RedisURL: r.url(), GatewayArgs: []string{"-mdr-cache-ttl", "0"}})
	seedSites(t, s)
	doc := patientDoc("FF-1", "Patient", "")
	put := func(id string) (int, time.Duration) {
		return timed(t, s, http.MethodPut, s.URL+charite.spec()+"/pats/"+id, strings.Replace(doc, `"FF-1`, `"`+id, -1), charite.xml()...)
	}
	clients := func() (int, time.Duration) { return timed(t, s, http.MethodGet, s.URL+"/oauth2/clients", "") }
	opsReady := func(ops string) int {
		code, _ := timed(t, s, http.MethodGet, "http://"+ops+"/readyz", "")
		return code
	}
	if code, _ := put("FF-1"); code != 201 {
		t.Fatalf("upload before = %d", code)
	}

	for _, tc := range []struct {
		name    string
		fail    func()
		recover func()
	}{
		// Killed: connections are refused at once.
		{"Killed", func() { r.kill() }, func() { r.start(t) }},
		// Stopped (SIGSTOP): connections hang, only timeouts end them.
		{"Frozen", func() { r.signal(t, syscall.SIGSTOP) }, func() { r.signal(t, syscall.SIGCONT) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.fail()
			for i, req := range []struct {
				name string
				do   func() (int, time.Duration)
			}{
				{"upload PUT", func() (int, time.Duration) { return put(fmt.Sprintf("FF-%s-%d", tc.name, 2)) }},
				{"auth GET /oauth2/clients", clients},
			} {
				code, took := req.do()
				t.Logf("Redis %s: %s = %d in %v", strings.ToLower(tc.name), req.name, code, took.Round(time.Millisecond))
				if code != http.StatusServiceUnavailable || took > failFastBound {
					t.Errorf("%d: %s = %d in %v, want 503 within %v", i, req.name, code, took, failFastBound)
				}
			}
			for _, svc := range []struct{ name, ops string }{{"upload", s.UploadOps}, {"auth", s.AuthOps}} {
				took := within(t, 2*failFastBound, svc.name+" /readyz 503", func() string {
					if c := opsReady(svc.ops); c != 503 {
						return fmt.Sprint(c)
					}
					return ""
				})
				t.Logf("Redis %s: %s /readyz 503 after %v", strings.ToLower(tc.name), svc.name, took.Round(time.Millisecond))
			}
			// The gateway itself stays in service and says what is down.
			if code, _ := timed(t, s, http.MethodGet, s.URL+"/readyz", ""); code != 200 {
				t.Errorf("gateway /readyz = %d while Redis is down, want 200", code)
			}
			within(t, 10*time.Second, "/health/groups shows the outage", func() string {
				if code, st := groups(t, s); code != 503 || st["upload"] != "down" || st["auth"] != "down" {
					return fmt.Sprint(code, st)
				}
				return ""
			})

			tc.recover()
			took := within(t, 15*time.Second, "recovery without restart", func() string {
				if c := opsReady(s.UploadOps); c != 200 {
					return fmt.Sprint("upload /readyz ", c)
				}
				if c := opsReady(s.AuthOps); c != 200 {
					return fmt.Sprint("auth /readyz ", c)
				}
				if c, _ := clients(); c != 200 {
					return fmt.Sprint("/oauth2/clients ", c)
				}
				if c, _ := put(fmt.Sprintf("FF-%s-3", tc.name)); c != 201 && c != 200 {
					return fmt.Sprint("upload ", c)
				}
				return ""
			})
			t.Logf("Redis %s: recovered %v after Redis was back", strings.ToLower(tc.name), took.Round(time.Millisecond))
			within(t, 10*time.Second, "/health/groups all up", func() string {
				if code, st := groups(t, s); code != 200 {
					return fmt.Sprint(code, st)
				}
				return ""
			})
		})
	}
}

// One group's outage never takes the gateway out of service: with auth
// stopped, /readyz stays 200, /health/groups names auth, the other groups
// serve and group A answers 503.
func TestFailFastGatewayReadyWithAuthDown(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{})
	if err := s.Auth.stop(t); err != nil {
		t.Fatalf("auth exit: %v", err)
	}
	s.Get(t, "/readyz", 200)
	within(t, 5*time.Second, "auth down in /health/groups", func() string {
		code, st := groups(t, s)
		if code != 503 || st["auth"] != "down" || st["mdr"] != "up" {
			return fmt.Sprint(code, st)
		}
		return ""
	})
	s.Get(t, "/v3/api/mdr/namespaces", 200)
	if code, took := timed(t, s, http.MethodGet, s.URL+"/oauth2/clients", ""); code != 503 || took > failFastBound {
		t.Fatalf("/oauth2/clients with auth down = %d in %v, want 503", code, took)
	}
}

// A full disk: uploads answer 507 (never 500), upload's /readyz turns 503
// and stays 503 while a document of the largest accepted size cannot be
// written, even when small writes still fit in the store file's free pages,
// and once space is free again it is 200 with uploads working, no restart.
func TestFailFastDiskFull(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mountTmpfs(t, dir, 8<<20) // skips when the test may not mount
	const maxDoc = 1 << 20
	s := NewStack(t, Options{UploadArgs: []string{"-data-dir", dir, "-validation", "off", "-max-document-bytes", strconv.Itoa(maxDoc)}})
	seedSites(t, s)
	upload := func(id string, size int) int {
		t.Helper()
		doc := patientDoc(id, "Patient", "")
		if pad := size - len(doc) - 10; pad > 0 {
			doc = patientDoc(id, "Patient", "<!--"+strings.Repeat("x", pad)+"-->")
		}
		code, _ := timed(t, s, http.MethodPut, s.URL+charite.spec()+"/pats/"+id, doc, charite.xml()...)
		return code
	}
	readyz := func() int {
		c, _ := timed(t, s, http.MethodGet, "http://"+s.UploadOps+"/readyz", "")
		return c
	}
	// A document written and then replaced by a small one leaves its pages
	// free in the store file: room for small writes (and a small probe) on
	// a full disk, though not for a document of the largest size.
	if code := upload("DF-shrunk", maxDoc/2); code != 201 {
		t.Fatalf("half-size upload = %d, want 201", code)
	}
	for i := range 2 {
		if code := upload("DF-shrunk", 0); code != 200 && code != 201 {
			t.Fatalf("replacing upload %d = %d, want 200 or 201", i, code)
		}
	}
	fill := filepath.Join(dir, "filler")
	fillDisk(t, fill)

	var full int
	for i := range 20 {
		code := upload(fmt.Sprintf("DF-%03d", i), maxDoc-1024)
		if code == http.StatusInsufficientStorage {
			full = i
			break
		}
		if code != 201 {
			t.Fatalf("upload %d on a filling disk = %d, want 201 or 507", i, code)
		}
		if i == 19 {
			t.Fatal("20 large uploads on a full disk, none refused")
		}
	}
	t.Logf("disk full: large upload %d answered 507", full)
	within(t, 10*time.Second, "upload /readyz 503 on a full disk", func() string {
		if c := readyz(); c != 503 {
			return fmt.Sprint(c)
		}
		return ""
	})
	s.Get(t, "/readyz", 200)

	// Small uploads may still succeed in the file's free pages; that must
	// not make the service look ready while the largest document fails.
	small := upload("DF-small", 0)
	t.Logf("small upload on the full disk: %d", small)
	if small != 201 && small != http.StatusInsufficientStorage {
		t.Fatalf("small upload on a full disk = %d, want 201 or 507", small)
	}
	// The health loop probes every 2 s: look past two of its rounds.
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if c := readyz(); c != 503 {
			t.Fatalf("upload /readyz = %d after a small upload succeeded on a disk without room for the largest document, want 503", c)
		}
	}
	if code := upload("DF-large", maxDoc-1024); code != http.StatusInsufficientStorage {
		t.Fatalf("large upload while not ready = %d, want 507", code)
	}

	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	within(t, 10*time.Second, "upload /readyz 200 once space is free", func() string {
		if c := readyz(); c != 200 {
			return fmt.Sprint(c)
		}
		return ""
	})
	if code := upload("DF-after", maxDoc-1024); code != 201 {
		t.Fatalf("large upload once space is free = %d, want 201", code)
	}
}

// fillDisk writes path until the file system is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			break
		}
	}
	// Smaller writes take the last partial block too.
	for _, n := range []int{4096, 512, 1} {
		for {
			if _, err := f.Write(buf[:n]); err != nil {
				break
			}
		}
	}
}
