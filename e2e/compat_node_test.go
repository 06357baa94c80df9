package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCompatOpenIDClient runs openid-client (Node.js, v6, with its
// dependencies oauth4webapi and jose vendored under
// testdata/openid-client/node_modules, all MIT) against a real stack:
// discovery, the code flow with PKCE and nonce, userinfo, refresh,
// client_secret_basic and client_secret_post, client_credentials. It needs
// node (20 or newer) on PATH and no network; without node it is skipped,
// except under CI=true, where it fails.
func TestCompatOpenIDClient(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err == nil {
		err = nodeAtLeast(node, 20)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v; CI must install Node.js 20 or newer to run the openid-client compatibility test", err)
		}
		t.Skipf("%v: the openid-client compatibility test needs Node.js 20 or newer", err)
	}
	dir := filepath.Join("testdata", "openid-client")
	if !exists(filepath.Join(dir, "node_modules", "openid-client", "package.json")) {
		t.Fatalf("%s/node_modules is missing: it is vendored; restore it with `npm ci --ignore-scripts` there", dir)
	}
	s := NewStack(t, Options{})
	seedAuth(t, s)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "openid-client.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"FRIS_GATEWAY_URL="+s.URL, "FRIS_ISSUER="+Issuer,
		"FRIS_CLIENT_ID="+demoClient, "FRIS_CLIENT_SECRET="+demoSecret, "FRIS_CALLBACK="+callback,
		"FRIS_USER_EMAIL="+demoEmail, "FRIS_USER_PASSWORD="+demoPass,
		"NODE_NO_WARNINGS=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	t.Logf("node --test:\n%s", out)
}

// nodeAtLeast checks node's major version: openid-client 6 and jose 6 need
// Node.js 20 or newer.
func nodeAtLeast(node string, major int) error {
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return fmt.Errorf("node --version: %v", err)
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	n, err := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	if err != nil || n < major {
		return fmt.Errorf("node %s is older than %d", strings.TrimSpace(string(out)), major)
	}
	return nil
}
