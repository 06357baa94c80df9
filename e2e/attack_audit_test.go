package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"fris.dev/pkg/identity"
)

// TestAttackAuditFlood: a stranger cannot flush the audit view (issue 42,
// finding 2). With -audit-keep 50, an operator creates a user; then 500
// anonymous token requests that each fail (no grant, a bogus grant_type,
// a garbage refresh token, an unknown code with the Explorer's client
// named) come from five loopback addresses (127.0.42.x), ten times the
// keep. The operator's CreateUser is still in the audit view; the flood
// is there as counts, at most one row per action, outcome, address and
// minute, adding up to what was sent; fris_audit_anonymous_folded_total
// on auth's /metrics says the same. On the old code every refusal was an
// event of its own and the flood pushed the operator's event out. On both
// stores.
func TestAttackAuditFlood(t *testing.T) {
	t.Parallel()
	t.Run("bolt", func(t *testing.T) { t.Parallel(); auditFlood(t, Options{}) })
	t.Run("redis", func(t *testing.T) { t.Parallel(); auditFlood(t, Options{Redis: true}) })
}

func auditFlood(t *testing.T, o Options) {
	o.AuthArgs = append(o.AuthArgs, "-audit-keep", "50")
	s := explorerStack(t, o)
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator, demoEmail)
	s.AuthCLI(t, 0, "create-user", "-email", graceEmail, "-password", gracePass, "-name", "Grace Hopper")

	kinds := []struct{ action, form string }{
		{"auth.token.none", ""},
		{"auth.token.unsupported", "grant_type=bogus"},
		{"auth.token.refresh_token", "grant_type=refresh_token&refresh_token=garbage"},
		{"auth.token.authorization_code", url.Values{"grant_type": {"authorization_code"}, "code": {"no-such-code"},
			"client_id": {explorerClient}, "client_secret": {explorerSecret}}.Encode()},
	}
	const addrs, perAddr = 5, 100
	var (
		mu   sync.Mutex
		sent = map[string]int{} // by action, answered by auth
		wg   sync.WaitGroup
	)
	for a := range addrs {
		c := clientFrom(src(42, byte(1+a)), 30*time.Second)
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < perAddr; i += 2 {
					k := kinds[(a+i)%len(kinds)]
					res, err := c.Post(s.URL+"/oauth2/token", "application/x-www-form-urlencoded", strings.NewReader(k.form))
					if err != nil {
						t.Errorf("%s: %v", k.action, err)
						return
					}
					b, _ := io.ReadAll(res.Body)
					res.Body.Close()
					// 400, 401, or 404 for the unknown code: refused, and
					// no abuse limit's 429 (whose events are capped).
					if res.StatusCode/100 != 4 || res.StatusCode == http.StatusTooManyRequests {
						t.Errorf("%s = %d %s, want a refusal", k.action, res.StatusCode, b)
						return
					}
					mu.Lock()
					sent[k.action]++
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	op := signInHTTP(t, s)
	// The operator's event stays: it is kept apart from the strangers'.
	created := auditRow("auth", "auth.admin.CreateUser", "admin-api")
	operatorEvent := func() {
		t.Helper()
		body := waitAuditView(t, op, s.URL+"/explorer/operator/audit?action=auth.admin.CreateUser", created)
		if !strings.Contains(body, "<code>email="+graceEmail+"</code>") || !strings.Contains(body, `data-class="admin"`) {
			t.Errorf("the operator's CreateUser of %s is not listed:\n%s", graceEmail, body)
		}
	}
	operatorEvent()

	// The flood's rows: anonymous, counted, per action.
	row := regexp.MustCompile(`<tr class="event" data-service="auth" data-action="(auth\.token\.[a-z_]+)" data-actor="anonymous" data-outcome="(?:denied|failed)" data-class="anonymous" data-count="(\d+)">`)
	flood := s.URL + "/explorer/operator/audit?" + url.Values{"class": {"anonymous"}, "action": {"auth.token."}}.Encode()
	var got map[string]int
	rows := 0
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := getPage(t, op, flood)
		if code != http.StatusOK {
			t.Fatalf("%s: %d\n%s", flood, code, body)
		}
		got, rows = map[string]int{}, 0
		for _, m := range row.FindAllStringSubmatch(body, -1) {
			n, _ := strconv.Atoi(m[2])
			got[m[1]] += n
			rows++
		}
		if fmt.Sprint(got) == fmt.Sprint(sent) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the audit view counts %v (%d rows), want %v:\n%s", got, rows, sent, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Four actions from five addresses: a row each per minute, and the
	// flood may have spanned a minute's turn.
	if rows > 2*len(kinds)*addrs {
		t.Errorf("%d rows for %d requests, want at most %d", rows, addrs*perAddr, 2*len(kinds)*addrs)
	}

	// And still, now that the whole flood is stored.
	operatorEvent()

	folded := foldedMetric(t, s.AuthOps)
	for action, n := range sent {
		if folded[action] != n {
			t.Errorf("fris_audit_anonymous_folded_total{action=%q} = %d, want %d", action, folded[action], n)
		}
	}
}

// foldedMetric reads fris_audit_anonymous_folded_total by action from a
// service's operations port.
func foldedMetric(t *testing.T, ops string) map[string]int {
	t.Helper()
	res, err := http.Get("http://" + ops + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	line := regexp.MustCompile(`^fris_audit_anonymous_folded_total\{action="([^"]+)",service="auth"\} (\d+)$`)
	out := map[string]int{}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if m := line.FindStringSubmatch(sc.Text()); m != nil {
			out[m[1]], _ = strconv.Atoi(m[2])
		}
	}
	return out
}
