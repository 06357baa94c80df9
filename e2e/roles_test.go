package e2e

import (
	"bufio"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2/clientcredentials"
)

// keyUser is a user who registered a key through POST /register, as
// anyone can.
type keyUser struct {
	email string
	key   *rsa.PrivateKey
	keyID int
}

func registerKeyUser(t *testing.T, s *Stack, email string) keyUser {
	t.Helper()
	u := keyUser{email: email, key: signingKey()}
	res, v := postJSON(t, s, oauth+"/register", fmt.Sprintf(`{"email":%q,"name":"Mallory Self","base64EncodedPublicKey":%q}`, email, spkiB64(t, &u.key.PublicKey)))
	wantStatus(t, res, v, 200)
	u.keyID = int(field(t, v, "keyId").(float64))
	return u
}

// signIn runs the signature flow (sign request, signed code, no client)
// and returns the access and refresh tokens.
func (u keyUser) signIn(t *testing.T, s *Stack) (access, refresh string) {
	t.Helper()
	res, v := postJSON(t, s, oauth+"/sign_request", fmt.Sprintf(`{"keyId":%d}`, u.keyID))
	wantStatus(t, res, v, 200)
	code := field(t, v, "code").(string)
	h := sha512.Sum512([]byte(code))
	sig, err := rsa.SignPKCS1v15(rand.Reader, u.key, crypto.SHA512, h[:])
	if err != nil {
		t.Fatal(err)
	}
	res, v = postJSON(t, s, oauth+"/token", fmt.Sprintf(`{"code":%q,"signature":%q}`, code, base64.StdEncoding.EncodeToString(sig)))
	wantStatus(t, res, v, 200)
	access, _, refresh = tokens(t, v)
	return access, refresh
}

// wantInsufficientScope checks a 403 that names the missing scope in the
// RFC 6750 challenge and in the JSON body.
func wantInsufficientScope(t *testing.T, s *Stack, method, path, tok, scope string) {
	t.Helper()
	var body *strings.Reader
	if method == http.MethodPost {
		body = strings.NewReader(inquiryJSON("Everyone's data", []string{"charite"}, ""))
	} else {
		body = strings.NewReader("")
	}
	res, b := s.Do(t, method, path, body, bearer(tok)...)
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("%s %s = %d, want 403: %s", method, path, res.StatusCode, b)
	}
	wantContains(t, res.Header.Get("WWW-Authenticate"), `error="insufficient_scope", scope="`+scope+`"`)
	if field(t, JSON(t, b), "error") != "insufficient_scope" {
		t.Fatalf("%s %s body %s", method, path, b)
	}
}

func TestRoles(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{BrokerArgs: []string{"-name", brokerName}})
	if s.Broker == nil {
		t.Fatal("the broker binary was not built")
	}
	seedAuth(t, s)
	researcherAPI := sb + "/researcher/inquiries"
	search := oauth + "/users/search?query=@"

	// Anyone may register a key and sign in; that opens no role.
	u := registerKeyUser(t, s, "mallory@fris.test")
	access, refresh := u.signIn(t, s)
	wantInsufficientScope(t, s, http.MethodGet, researcherAPI, access, "broker:researcher")
	wantInsufficientScope(t, s, http.MethodPost, researcherAPI, access, "broker:researcher")
	wantInsufficientScope(t, s, http.MethodGet, search, access, "users:search")
	// Still a valid token for what is the user's own.
	s.Get(t, oauth+"/userinfo", 200, "Authorization", "Bearer "+access)

	// An operator grants both roles. The token issued before keeps its
	// scopes; the next one, by refresh or by signing in again, has them.
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", "broker:researcher,users:search", u.email)
	wantInsufficientScope(t, s, http.MethodGet, researcherAPI, access, "broker:researcher")
	res, v := postJSON(t, s, oauth+"/token", fmt.Sprintf(`{"refresh_token":%q}`, refresh))
	wantStatus(t, res, v, 200)
	refreshed, _, _ := tokens(t, v)
	again, _ := u.signIn(t, s)
	for _, tok := range []string{refreshed, again} {
		researcherDo(t, s, http.MethodGet, "/inquiries", tok, "", 200)
		_, b := s.Get(t, search, 200, "Authorization", "Bearer "+tok)
		if n := len(JSON(t, b).([]any)); n != 2 {
			t.Fatalf("search lists %d users: %s", n, b)
		}
	}
	in := researcherDo(t, s, http.MethodPost, "/inquiries", again, inquiryJSON("Granted", []string{"charite"}, ""), 200)
	researcherDo(t, s, http.MethodPost, "/inquiries/"+in["id"].(string)+"/release", again, "", 200)

	// The demo researcher (seeded as make run seeds it) holds both.
	demo, _ := researcherToken(t, s, demoEmail, demoPass)
	researcherDo(t, s, http.MethodGet, "/inquiries", demo, "", 200)
	s.Get(t, search, 200, "Authorization", "Bearer "+demo)

	// Revoking takes effect the same way: at the next token.
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", "", u.email)
	res, v = postJSON(t, s, oauth+"/token", fmt.Sprintf(`{"refresh_token":%q}`, field(t, v, "refresh_token")))
	wantStatus(t, res, v, 200)
	revoked, _, _ := tokens(t, v)
	wantInsufficientScope(t, s, http.MethodGet, researcherAPI, revoked, "broker:researcher")

	// A client's own token holds no role, whatever its scopes.
	cc := clientcredentials.Config{ClientID: demoClient, ClientSecret: demoSecret, TokenURL: s.URL + oauth + "/token"}
	ctok, err := cc.Token(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	wantInsufficientScope(t, s, http.MethodGet, researcherAPI, ctok.AccessToken, "broker:researcher")
	wantInsufficientScope(t, s, http.MethodGet, search, ctok.AccessToken, "users:search")
}

// auditEvents returns the audit events of one action a process logged.
func auditEvents(p *proc, action string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(p.logs()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["log"] == "audit" && rec["action"] == action {
			out = append(out, rec)
		}
	}
	return out
}

// waitAudit waits for the audit event of action that matches want (the
// process's stderr is read asynchronously) and returns it.
func waitAudit(t *testing.T, p *proc, action string, want map[string]any) map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
	events:
		for _, e := range auditEvents(p, action) {
			for k, v := range want {
				if e[k] != v {
					continue events
				}
			}
			if _, ok := e["time"]; !ok {
				t.Fatalf("audit event without time: %v", e)
			}
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("no audit event %s with %v in the %s log:\n%s", action, want, p.name, p.logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestAuditEvents(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{BrokerArgs: []string{"-registration", "approval"}})
	seedAuth(t, s)

	// A failed sign-in on the login form and at the token endpoint.
	c := browser(t)
	form := loginForm(t, s, c, "client_id="+demoClient)
	form.Set("email", demoEmail)
	form.Set("password", "not the password")
	if res, body := submit(t, s, c, form); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong password = %d: %s", res.StatusCode, body)
	}
	e := waitAudit(t, s.Auth, "auth.login", map[string]any{"outcome": "failure", "target": demoEmail, "actor": "anonymous"})
	// The gateway forwards the address the client connected from.
	if e["client_addr"] != "127.0.0.1" || e["client_id"] != demoClient {
		t.Fatalf("login failure event %v", e)
	}
	res, v := postJSON(t, s, oauth+"/token", fmt.Sprintf(`{"grant_type":"client_credentials","client_id":%q,"client_secret":"not-the-secret-at-all"}`, demoClient))
	wantStatus(t, res, v, 401)
	waitAudit(t, s.Auth, "auth.token.client_credentials", map[string]any{"outcome": "failure", "client_id": demoClient, "client_addr": "127.0.0.1"})

	// A successful sign-in names the user.
	_, sub := researcherToken(t, s, demoEmail, demoPass)
	waitAudit(t, s.Auth, "auth.login", map[string]any{"outcome": "success", "actor": sub})
	waitAudit(t, s.Auth, "auth.token.authorization_code", map[string]any{"outcome": "success", "actor": sub, "client_id": demoClient})

	// A registration; a client's claim of another address is ignored.
	k := signingKey()
	res, b := s.Do(t, http.MethodPost, oauth+"/register",
		strings.NewReader(fmt.Sprintf(`{"email":"self@fris.test","base64EncodedPublicKey":%q}`, spkiB64(t, &k.PublicKey))),
		"Content-Type", "application/json", "X-Forwarded-For", "203.0.113.7", "X-Fris-Client-Addr", "203.0.113.8")
	if res.StatusCode != 200 {
		t.Fatalf("register = %d: %s", res.StatusCode, b)
	}
	userID := fmt.Sprint(field(t, JSON(t, b), "userId"))
	waitAudit(t, s.Auth, "auth.register", map[string]any{"outcome": "success", "actor": userID, "target": "self@fris.test", "client_addr": "127.0.0.1"})

	// An operator's grant, through the admin API.
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", "broker:researcher", "self@fris.test")
	waitAudit(t, s.Auth, "auth.admin.SetUserScopes", map[string]any{"outcome": "success", "actor": "admin-api", "email": "self@fris.test", "scopes": "broker:researcher"})

	// A bank registers, an operator approves it, the bank deletes itself.
	bk := registerBank(t, s, "bank@charite.example")
	waitAudit(t, s.Broker, "broker.bank.register", map[string]any{"outcome": "success", "target": bk.email, "client_addr": "127.0.0.1"})
	s.BrokerCLI(t, 0, "approve-bank", "-site", "charite", bk.email)
	waitAudit(t, s.Broker, "broker.admin.ApproveBank", map[string]any{"outcome": "success", "actor": "admin-api", "email": bk.email, "site_id": "charite"})
	s.BrokerCLI(t, 1, "approve-bank", "-site", "charite", "nobody@charite.example")
	waitAudit(t, s.Broker, "broker.admin.ApproveBank", map[string]any{"outcome": "failure", "email": "nobody@charite.example"})
	if res, body := s.Do(t, http.MethodDelete, sb+"/banks/"+bk.email, nil, bk.auth()...); res.StatusCode != http.StatusNoContent {
		t.Fatalf("delete bank = %d: %s", res.StatusCode, body)
	}
	waitAudit(t, s.Broker, "broker.bank.delete", map[string]any{"outcome": "success", "actor": "bank:" + bk.email})

	// Never a secret: passwords, client secrets, bank tokens.
	for _, p := range []*proc{s.Auth, s.Broker} {
		for _, secret := range []string{demoPass, "not the password", demoSecret, "not-the-secret-at-all", bk.token} {
			for _, e := range auditLines(p) {
				if strings.Contains(e, secret) {
					t.Fatalf("%s audit log holds %q: %s", p.name, secret, e)
				}
			}
		}
	}
	// No reads of the admin API are recorded.
	s.AuthCLI(t, 0, "users")
	time.Sleep(100 * time.Millisecond)
	if n := len(auditEvents(s.Auth, "auth.admin.ListUsers")); n != 0 {
		t.Fatalf("%d audit events for a read", n)
	}
}

// auditLines are the audit records of a process's stderr, as written.
func auditLines(p *proc) []string {
	var out []string
	for _, l := range strings.Split(p.logs(), "\n") {
		if strings.Contains(l, `"log":"audit"`) {
			out = append(out, l)
		}
	}
	return out
}
