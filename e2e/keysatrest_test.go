package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"fris.dev/pkg/testredis"
)

// TestKeysAtRest: auth's private signing keys are stored encrypted (the raw
// store holds no key material in clear); a restart with the secret rotated
// (new first, old second) keeps every key, so tokens issued before still
// work; the old secret alone, a wrong one, or none stops auth at start.
func TestKeysAtRest(t *testing.T) {
	// Not parallel: it restarts auth on the addresses it had, which a parallel test's listener could take while it is down.
	for _, backend := range []struct {
		name string
		// store returns auth's store flags and a reader of everything the
		// store holds, raw.
		store func(t *testing.T) (args []string, raw func(t *testing.T) []byte)
	}{
		{"Bolt", func(t *testing.T) ([]string, func(t *testing.T) []byte) {
			dir := t.TempDir()
			return []string{"-data-dir", dir}, func(t *testing.T) []byte {
				var all []byte
				files, _ := filepath.Glob(filepath.Join(dir, "*"))
				for _, f := range files {
					b, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					all = append(all, b...)
				}
				return all
			}
		}},
		{"Redis", func(t *testing.T) ([]string, func(t *testing.T) []byte) {
			return redisRaw(t, testredis.Client(t), testredis.URL(t))
		}},
		{"Cluster", func(t *testing.T) ([]string, func(t *testing.T) []byte) {
			return redisRaw(t, testredis.ClusterClient(t), testredis.ClusterURL(t))
		}},
	} {
		t.Run(backend.name, func(t *testing.T) {
			storeArgs, raw := backend.store(t)
			oldSecret, newSecret := NewKeySecret(t), NewKeySecret(t)
			s := NewStack(t, Options{Redis: backend.name == "Redis", Cluster: backend.name == "Cluster", AuthArgs: append(storeArgs, "-key-secrets", oldSecret)})
			seedAuth(t, s)
			res, v := postJSON(t, s, oauth+"/token", codeRequest(login(t, s, "client_id="+demoClient)))
			wantStatus(t, res, v, 200)
			access, _, refresh := tokens(t, v)
			kid := field(t, jwtPart(t, access, 0), "kid").(string)
			s.Get(t, oauth+"/userinfo", 200, "Authorization", "Bearer "+access)
			_, b := s.Get(t, oauth+"/jwks", 200)
			n, err := base64.RawURLEncoding.DecodeString(field(t, JSON(t, b), "keys", 0, "n").(string))
			if err != nil {
				t.Fatal(err)
			}

			if err := s.Auth.stop(t); err != nil {
				t.Fatalf("auth exit: %v", err)
			}
			wantNoKeyInClear(t, raw(t), kid, n)

			// Rotated: the new secret encrypts, the old one still decrypts,
			// and auth re-encrypts the keys under the new one at start.
			serve := func(secrets string) []string {
				return append([]string{"serve", "-grpc-addr", s.AuthAddr, "-ops-addr", s.AuthOps, "-log-level", "debug",
					"-issuer", Issuer, "-argon2-memory-kib", "1024", "-key-secrets", secrets}, storeArgs...)
			}
			s.Auth = start(t, "auth", serve(newSecret+","+oldSecret)...)
			wantContains(t, s.Auth.logs(), "signing keys re-encrypted under the first key secret")
			waitOK(t, s, oauth+"/userinfo", "Authorization", "Bearer "+access)
			res, v = postJSON(t, s, oauth+"/token", fmt.Sprintf(`{"refresh_token":%q}`, refresh))
			wantStatus(t, res, v, 200)
			again, _, _ := tokens(t, v)
			if got := field(t, jwtPart(t, again, 0), "kid"); got != kid {
				t.Fatalf("signing key after the restart = %v, want the same %s (no new key set)", got, kid)
			}
			if err := s.Auth.stop(t); err != nil {
				t.Fatalf("auth exit: %v", err)
			}
			wantNoKeyInClear(t, raw(t), kid, n)

			// Local addresses for the runs that must not start.
			fail := func(t *testing.T, secrets, want string) {
				t.Helper()
				args := append([]string{"serve", "-grpc-addr", "127.0.0.1:0", "-ops-addr", "127.0.0.1:0", "-issuer", Issuer}, storeArgs...)
				if secrets != "" {
					args = append(args, "-key-secrets", secrets)
				}
				code, out := runExit(t, "auth", args...)
				if code == 0 || !strings.Contains(out, want) {
					t.Fatalf("auth %v exited %d, want non-zero with %q:\n%s", args, code, want, out)
				}
			}
			// The rewrap moved the keys: the old secret alone opens nothing.
			fail(t, oldSecret, "wrong key secret")
			fail(t, NewKeySecret(t), "wrong key secret")
			fail(t, "", "no key secret: set -key-secret-file or FRIS_AUTH_KEY_SECRET_FILE")
			// And none of those runs replaced the keys.
			s.Auth = start(t, "auth", serve(newSecret)...)
			b = waitOK(t, s, oauth+"/jwks")
			if got := field(t, JSON(t, b), "keys", 0, "kid"); got != kid {
				t.Fatalf("kid after the failed starts = %v, want %s", got, kid)
			}
		})
	}
}

// waitOK polls path through the gateway until it answers 200 (the gateway
// reconnects to a restarted service by itself) and returns the body.
func waitOK(t *testing.T, s *Stack, path string, headers ...string) []byte {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, b := s.Do(t, http.MethodGet, path, nil, headers...)
		if res.StatusCode == 200 {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s after the restart = %d: %s", path, res.StatusCode, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runExit runs a binary that is expected to exit by itself (within 30 s),
// without any FRIS_AUTH_KEY_SECRET* of the test's environment, and returns
// its exit code and output.
func runExit(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, bin), withTLS(bin, args)...)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "FRIS_AUTH_KEY_SECRET") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s %v did not exit:\n%s", bin, args, out)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// wantNoKeyInClear fails when raw holds the RSA modulus n that every
// encoding of the private key carries: as bytes (DER) or in base64, the
// form JSON gives bytes, at any alignment; or a PEM block. The key id must
// be there: it proves raw is the auth store.
func wantNoKeyInClear(t *testing.T, raw []byte, kid string, n []byte) {
	t.Helper()
	if !bytes.Contains(raw, []byte(kid)) {
		t.Fatalf("the raw store does not hold the key id %s: not the auth store?", kid)
	}
	needles := map[string][]byte{"modulus": n, "PEM marker": []byte("PRIVATE KEY-----")}
	for shift := 0; shift < 3; shift++ {
		padded := append(make([]byte, shift), n...)
		for name, enc := range map[string]*base64.Encoding{"base64": base64.StdEncoding, "base64url": base64.RawURLEncoding} {
			s := enc.EncodeToString(padded)
			needles[fmt.Sprintf("modulus in %s, shift %d", name, shift)] = []byte(s[4 : len(s)-4])
		}
	}
	for name, needle := range needles {
		if bytes.Contains(raw, needle) {
			t.Errorf("the raw store holds the signing key's %s in clear", name)
		}
	}
}

// redisRaw is TestKeysAtRest's store for a Redis: auth's flags and a reader
// of every key and string value under a fresh prefix. On a Cluster they all
// live on the master of the prefix's hash tag.
func redisRaw(t *testing.T, c redis.UniversalClient, url string) ([]string, func(t *testing.T) []byte) {
	prefix := testredis.Prefix(t)
	return []string{"-store", "redis", "-redis-url", url, "-redis-prefix", prefix}, func(t *testing.T) []byte {
		ctx := context.Background()
		var node redis.Cmdable = c
		if cc, ok := c.(*redis.ClusterClient); ok {
			m, err := cc.MasterForKey(ctx, "{"+prefix+"}")
			if err != nil {
				t.Fatal(err)
			}
			node = m
		}
		ks, err := node.Keys(ctx, "{"+prefix+"}*").Result()
		if err != nil {
			t.Fatal(err)
		}
		var all []byte
		for _, k := range ks {
			all = append(all, k...)
			if typ, _ := node.Type(ctx, k).Result(); typ == "string" {
				v, err := node.Get(ctx, k).Bytes()
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, v...)
			}
		}
		return all
	}
}
