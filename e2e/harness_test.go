// Package e2e drives the real binaries over HTTP, exactly as clients do:
// every test starts (or shares) a stack of service processes and a gateway
// on loopback ports chosen by the kernel, and runs beside the others
// (parallel_test.go).
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"fris.dev/pkg/devca"
	"fris.dev/pkg/testredis"
)

var (
	binDir   string // built binaries
	repoRoot string
	// tlsDir holds the run's development CA and a certificate per
	// component (devca.Names), as `make run` keeps them in .fris/tls.
	tlsDir string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	raiseParallel()
	wd, _ := os.Getwd()
	repoRoot = wd
	for !exists(filepath.Join(repoRoot, "go.work")) {
		parent := filepath.Dir(repoRoot)
		if parent == repoRoot {
			fmt.Fprintln(os.Stderr, "e2e: go.work not found above", wd)
			return 1
		}
		repoRoot = parent
	}
	dir, err := os.MkdirTemp("", "fris-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	tlsDir = filepath.Join(dir, "tls")
	if _, err := devca.Ensure(tlsDir, devca.Names, devca.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: making the test CA:", err)
		return 1
	}
	// Every service under services/ is built, so a new service joins the
	// stack by existing.
	targets := []string{"./gateway/cmd/gateway"}
	cmds, _ := filepath.Glob(filepath.Join(repoRoot, "services", "*", "cmd", "*"))
	for _, c := range cmds {
		rel, _ := filepath.Rel(repoRoot, c)
		targets = append(targets, "./"+rel)
	}
	// Built as make build and the images build them (grpcnotrace).
	build := exec.Command("go", append([]string{"build", "-tags", "grpcnotrace", "-o", dir + "/"}, targets...)...)
	build.Dir = repoRoot
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building binaries:", err)
		return 1
	}
	return m.Run()
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// proc is one running binary.
type proc struct {
	name   string
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr bytes.Buffer
	addrs  map[string]string
	done   chan error
}

// start runs a binary and waits for its "listening" log line, which names
// the addresses the kernel picked.
func start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, done: make(chan error, 1)}
	p.cmd = exec.Command(filepath.Join(binDir, name), withTLS(name, args)...)
	pipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan map[string]string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			p.mu.Lock()
			p.stderr.Write(line)
			p.stderr.WriteByte('\n')
			p.mu.Unlock()
			var rec map[string]any
			if json.Unmarshal(line, &rec) == nil && rec["msg"] == "listening" {
				addrs := map[string]string{}
				for k, v := range rec {
					if s, ok := v.(string); ok {
						addrs[k] = s
					}
				}
				listening <- addrs
			}
		}
		p.done <- p.cmd.Wait()
	}()
	select {
	case p.addrs = <-listening:
	case err := <-p.done:
		t.Fatalf("%s exited before listening: %v\n%s", name, err, p.logs())
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Fatalf("%s did not start listening\n%s", name, p.logs())
	}
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			t.Logf("%s log:\n%s", name, p.logs())
		}
	})
	return p
}

func (p *proc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// stop sends SIGTERM and waits for a graceful exit; it returns the exit error.
func (p *proc) stop(t *testing.T) error {
	if p.cmd.ProcessState != nil {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Errorf("%s did not stop within 20s of SIGTERM", p.name)
		return <-p.done
	}
}

// tlsArgs are the TLS flags of the named component's certificate.
func tlsArgs(name string) []string {
	return []string{"-tls-cert", filepath.Join(tlsDir, name+".pem"), "-tls-key", filepath.Join(tlsDir, name+"-key.pem"),
		"-tls-ca", filepath.Join(tlsDir, "ca.pem")}
}

// withTLS gives a command line of bin its certificate: the gateway's, a
// service's for `serve`, the operator's (admin) for a CLI subcommand but
// `restore`, which works on files only. They go first, so that flags the
// test passes win.
func withTLS(bin string, args []string) []string {
	switch {
	case bin == "gateway":
		return append(tlsArgs("gateway"), args...)
	case len(args) == 0, args[0] == "restore":
		return args
	case args[0] == "serve":
		return append(append([]string{"serve"}, tlsArgs(bin)...), args[1:]...)
	default:
		return append(append([]string{args[0]}, tlsArgs("admin")...), args[1:]...)
	}
}

// Issuer is the public base URL the test stacks' auth and gateway agree on.
const Issuer = "http://fris.test"

// Stack is a running deployment: services and a gateway.
type Stack struct {
	URL      string
	MDRAddr  string
	AuthAddr string
	AuthOps  string
	MDR      *proc
	Auth     *proc
	Gateway  *proc
	// GatewayOps is the gateway's operations port (its /metrics).
	GatewayOps string
	// Upload and Broker are nil until their services exist (see hasBinary).
	UploadAddr string
	UploadOps  string
	Upload     *proc
	BrokerAddr string
	BrokerOps  string
	Broker     *proc
	client     *http.Client
}

// Options choose the backend and extra flags.
type Options struct {
	Redis bool
	// RedisURL, with Redis, is the Redis the stack uses instead of
	// REDIS_URL (a test's own server, which it may stop).
	RedisURL string
	// Cluster runs the stack on the Redis Cluster at REDIS_CLUSTER_URL
	// (Redis is implied).
	Cluster bool
	NoDemo  bool
	// NoSites leaves the broker's site registry empty (else StackSites).
	NoSites     bool
	GatewayArgs []string
	MDRArgs     []string
	AuthArgs    []string
	UploadArgs  []string
	BrokerArgs  []string
}

// StackSites are the sites (id, German and English name) a stack's
// registry holds unless Options.NoSites.
var StackSites = [][3]string{
	{"charite", "Charité – Universitätsmedizin Berlin", "Charité – Universitätsmedizin Berlin"},
	{"dresden", "Universitätsklinikum Dresden", "University Hospital Dresden"},
	{"muenchen", "Klinikum der Universität München", "LMU University Hospital Munich"},
}

// registerSites puts StackSites into the broker's site registry.
func (s *Stack) registerSites(t *testing.T) {
	t.Helper()
	for _, site := range StackSites {
		s.BrokerCLI(t, 0, "create-site", "-id", site[0], "-name-de", site[1], "-name-en", site[2], "-if-missing")
	}
}

// uploadBroker is upload's -broker-addr: the site registry, when the
// stack runs a broker.
func (s *Stack) uploadBroker() []string {
	if s.BrokerAddr == "" {
		return nil
	}
	return []string{"-broker-addr", s.BrokerAddr}
}

// hasBinary tells whether TestMain built the named service.
func hasBinary(name string) bool { return exists(filepath.Join(binDir, name)) }

func storeArgs(t *testing.T, o Options) []string {
	if o.Redis || o.Cluster {
		url := o.RedisURL
		switch {
		case url != "":
		case o.Cluster:
			url = testredis.ClusterURL(t)
		default:
			url = testredis.URL(t)
		}
		return []string{"-store", "redis", "-redis-url", url, "-redis-prefix", testredis.Prefix(t)}
	}
	return []string{"-data-dir", t.TempDir()}
}

// NewKeySecret is a random secret for auth's -key-secrets: base64 of 32
// bytes, as `head -c 32 /dev/urandom | base64` makes one.
func NewKeySecret(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// NewStack starts mdr and the gateway and seeds the demo registry.
func NewStack(t *testing.T, o Options) *Stack {
	t.Helper()
	s := &Stack{client: &http.Client{Timeout: 30 * time.Second, Transport: checked(t, nil, o.GatewayArgs)}}
	s.MDR = start(t, "mdr", append(append([]string{"serve", "-grpc-addr", "127.0.0.1:0", "-ops-addr", "127.0.0.1:0", "-log-level", "debug"}, storeArgs(t, o)...), o.MDRArgs...)...)
	s.MDRAddr = s.MDR.addrs["grpc"]
	if !o.NoDemo {
		s.MDRCLI(t, 0, "import", filepath.Join(repoRoot, "services/mdr/demo/mdr16.json"))
	}
	// Cheap password hashing keeps the tests fast; production keeps the
	// default. A fresh key secret per stack; AuthArgs may name another.
	s.Auth = start(t, "auth", append(append([]string{"serve", "-grpc-addr", "127.0.0.1:0", "-ops-addr", "127.0.0.1:0",
		"-log-level", "debug", "-issuer", Issuer, "-argon2-memory-kib", "1024", "-key-secrets", NewKeySecret(t)},
		storeArgs(t, o)...), o.AuthArgs...)...)
	s.AuthAddr, s.AuthOps = s.Auth.addrs["grpc"], s.Auth.addrs["ops"]
	gw := []string{"-addr", "127.0.0.1:0", "-ops-addr", "127.0.0.1:0", "-mdr-addr", s.MDRAddr, "-auth-addr", s.AuthAddr,
		"-jwks-url", "http://" + s.AuthOps + "/jwks", "-issuer", Issuer}
	if hasBinary("broker") {
		s.Broker = start(t, "broker", append(append([]string{"serve", "-grpc-addr", "127.0.0.1:0", "-ops-addr", "127.0.0.1:0",
			"-log-level", "debug"}, storeArgs(t, o)...), o.BrokerArgs...)...)
		s.BrokerAddr, s.BrokerOps = s.Broker.addrs["grpc"], s.Broker.addrs["ops"]
		gw = append(gw, "-broker-addr", s.BrokerAddr)
		if !o.NoSites {
			s.registerSites(t)
		}
	}
	if hasBinary("upload") {
		args := append([]string{"serve", "-grpc-addr", "127.0.0.1:0", "-ops-addr", "127.0.0.1:0",
			"-log-level", "debug", "-mdr-addr", s.MDRAddr, "-argon2-memory-kib", "1024"}, s.uploadBroker()...)
		s.Upload = start(t, "upload", append(append(args, storeArgs(t, o)...), o.UploadArgs...)...)
		s.UploadAddr, s.UploadOps = s.Upload.addrs["grpc"], s.Upload.addrs["ops"]
		gw = append(gw, "-upload-addr", s.UploadAddr)
	}
	s.Gateway = start(t, "gateway", append(gw, o.GatewayArgs...)...)
	s.URL = "http://" + s.Gateway.addrs["http"]
	s.GatewayOps = s.Gateway.addrs["ops"]
	s.client.Transport.(*apiCheck).gateway = s.Gateway.addrs["http"]
	// /readyz says the gateway serves; /health/groups that every service
	// behind it does too (and auth's signing keys are loaded).
	s.waitFor(t, "/readyz", 200, 15*time.Second)
	s.waitFor(t, "/health/groups", 200, 15*time.Second)
	return s
}

// waitFor polls the gateway path until it answers the status.
func (s *Stack) waitFor(t *testing.T, path string, status int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		res, err := s.client.Get(s.URL + path)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == status {
				return
			}
			err = fmt.Errorf("status %d", res.StatusCode)
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway %s never answered %d: %v", path, status, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// MDRCLI runs an mdr admin subcommand against the stack and checks its exit
// code (0 or non-zero as wanted); it returns combined output.
func (s *Stack) MDRCLI(t *testing.T, wantExit int, args ...string) string {
	t.Helper()
	return cli(t, "mdr", s.MDRAddr, wantExit, args...)
}

// UploadCLI is MDRCLI for the upload binary.
func (s *Stack) UploadCLI(t *testing.T, wantExit int, args ...string) string {
	t.Helper()
	return cli(t, "upload", s.UploadAddr, wantExit, args...)
}

// BrokerCLI is MDRCLI for the broker binary.
func (s *Stack) BrokerCLI(t *testing.T, wantExit int, args ...string) string {
	t.Helper()
	return cli(t, "broker", s.BrokerAddr, wantExit, args...)
}

// AuthCLI is MDRCLI for the auth binary.
func (s *Stack) AuthCLI(t *testing.T, wantExit int, args ...string) string {
	t.Helper()
	return cli(t, "auth", s.AuthAddr, wantExit, args...)
}

func cli(t *testing.T, bin, addr string, wantExit int, args ...string) string {
	t.Helper()
	full := append([]string{args[0], "-addr", addr}, args[1:]...)
	cmd := exec.Command(filepath.Join(binDir, bin), withTLS(bin, full)...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	if (wantExit == 0) != (code == 0) {
		t.Fatalf("%s %v exited %d, want %d:\n%s", bin, args, code, wantExit, out)
	}
	return string(out)
}

// Do sends a request and returns the response with its body read.
func (s *Stack) Do(t *testing.T, method, path string, body io.Reader, headers ...string) (*http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

// Get is Do with GET, asserting the status.
func (s *Stack) Get(t *testing.T, path string, wantStatus int, headers ...string) (*http.Response, []byte) {
	t.Helper()
	res, b := s.Do(t, http.MethodGet, path, nil, headers...)
	if res.StatusCode != wantStatus {
		t.Fatalf("GET %s = %d, want %d: %s", path, res.StatusCode, wantStatus, b)
	}
	return res, b
}

// JSON decodes b into a generic value, failing the test on bad JSON.
func JSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, b)
	}
	return v
}

// field walks a decoded JSON value by object keys and array indexes.
func field(t *testing.T, v any, path ...any) any {
	t.Helper()
	cur := v
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				t.Fatalf("at %v: %T is not an object", path, cur)
			}
			if cur, ok = m[k]; !ok {
				t.Fatalf("at %v: no key %q in %v", path, k, keys(m))
			}
		case int:
			a, ok := cur.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("at %v: not an array with index %d: %v", path, k, cur)
			}
			cur = a[k]
		}
	}
	return cur
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func wantHeader(t *testing.T, res *http.Response, name, want string) {
	t.Helper()
	if got := res.Header.Get(name); got != want {
		t.Fatalf("%s = %q, want %q", name, got, want)
	}
}

func wantContains(t *testing.T, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Fatalf("%q does not contain %q", s, sub)
	}
}
