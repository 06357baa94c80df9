package service

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"fris.dev/pkg/audit"
	authv1 "fris.dev/proto/auth/v1"
)

// syncBuffer is written by the server's goroutines and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) events(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %s", l)
		}
		out = append(out, m)
	}
	return out
}

func TestAuditEvents(t *testing.T) {
	buf := &syncBuffer{}
	e := newEnv(t, func(c *Config) { c.Audit = audit.New(buf, "auth") })
	ctx := context.Background()
	clientID, secret := e.seed(t)

	// A failed and a successful login, a code exchange, a registration, a
	// signature sign-in, a refresh and its reuse.
	_, _ = e.pub.Login(ctx, &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: "ada@example.org", Password: "wrong password"})
	code := e.login(t, clientID, nil)
	if _, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: code, ClientId: clientID, ClientSecret: secret}); err != nil {
		t.Fatal(err)
	}
	res, _ := signInByKey(t, e, "self@example.org")
	if _, err := e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: res.GetRefreshToken()}); err != nil {
		t.Fatal(err)
	}
	_, _ = e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: res.GetRefreshToken()})
	_, _ = e.pub.Token(ctx, &authv1.TokenRequest{GrantType: "client_credentials", ClientId: clientID, ClientSecret: "wrong-wrong-wrong"})

	ada, self := e.uid(t, "ada@example.org"), e.uid(t, "self@example.org")
	want := []struct{ action, actor, target, outcome string }{
		{"auth.login", "anonymous", "ada@example.org", audit.Failure},
		{"auth.login", ada, "ADA@example.org", audit.Success},
		{"auth.token.authorization_code", ada, "", audit.Success},
		{"auth.register", self, "self@example.org", audit.Success},
		{"auth.token.signature", self, "", audit.Success},
		{"auth.token.refresh_token", self, "", audit.Success},
		{"auth.refresh.reuse", self, "", audit.Failure},
		{"auth.token.refresh_token", "anonymous", "", audit.Failure},
		{"auth.token.client_credentials", "anonymous", "", audit.Failure},
	}
	got := buf.events(t)
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d:\n%s", len(got), len(want), buf.String())
	}
	for i, w := range want {
		g := got[i]
		if g["log"] != "audit" || g["action"] != w.action || g["actor"] != w.actor || g["outcome"] != w.outcome || (w.target != "" && g["target"] != w.target) {
			t.Errorf("event %d = %v, want %+v", i, g, w)
		}
	}
	// Never a secret, a password, a code or a token.
	for _, secretish := range []string{secret, "wrong password", "correct horse", code, res.GetRefreshToken(), res.GetAccessToken(), "wrong-wrong-wrong"} {
		if strings.Contains(buf.String(), secretish) {
			t.Fatalf("the audit log holds %q:\n%s", secretish, buf.String())
		}
	}
}
