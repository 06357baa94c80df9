package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/kv"
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
	l := audit.New(buf, "auth")
	db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "audit.db"), kv.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	kept := audit.NewStore(db, audit.DefaultRetention)
	stop := l.Keep(kept, nil)
	e := newEnv(t, func(c *Config) { c.Audit = l })
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
	// Stored by class: who proved who it is in the call is signed-in, a
	// stranger's refusals are folded into counts, a registration is
	// anonymous but stored on its own.
	stop()
	classes := map[string][]string{}
	evs, _, err := kept.List(ctx, audit.Filter{PageSize: audit.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	for i := len(evs) - 1; i >= 0; i-- {
		classes[evs[i].Class] = append(classes[evs[i].Class], fmt.Sprintf("%s/%s/%d", evs[i].Action, evs[i].Outcome, max(evs[i].Count, 1)))
	}
	if got, want := strings.Join(classes[audit.ClassSignedIn], " "), "auth.login/ok/1 auth.token.authorization_code/ok/1 auth.token.signature/ok/1 auth.token.refresh_token/ok/1 auth.refresh.reuse/failed/1"; got != want {
		t.Errorf("signed-in: %s, want %s", got, want)
	}
	anon := classes[audit.ClassAnonymous]
	sort.Strings(anon)
	if got, want := strings.Join(anon, " "), "auth.login/denied/1 auth.register/ok/1 auth.token.client_credentials/denied/1 auth.token.refresh_token/denied/1"; got != want {
		t.Errorf("anonymous: %s, want %s", got, want)
	}
	// Never a secret, a password, a code or a token.
	for _, secretish := range []string{secret, "wrong password", "correct horse", code, res.GetRefreshToken(), res.GetAccessToken(), "wrong-wrong-wrong"} {
		if strings.Contains(buf.String(), secretish) {
			t.Fatalf("the audit log holds %q:\n%s", secretish, buf.String())
		}
	}
}
