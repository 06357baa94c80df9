package main

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeAuth is a gateway with group A's machine flows as the auth service
// has them: refresh tokens rotate, and presenting a spent one is a reuse
// (403, counted). failRefresh makes every refresh a 503.
type fakeAuth struct {
	mu          sync.Mutex
	logins      map[string]bool  // authorization codes
	signCodes   map[string]int32 // sign request code -> key id
	keys        map[int32]*rsa.PublicKey
	refresh     map[string]bool // refresh token -> spent
	access      map[string]bool
	reuses      int
	fragments   int // requests whose URI carried a '#'
	badSigs     int
	failRefresh bool
	cacheAnon   bool
	anonReads   int
	sigClients  map[string]int // signature flow's token requests per client_id
	jsonGrants  int            // refreshes with grant_type sent as JSON, not as a form
}

// fakeES256Client is the client the fake answers as one set to ES256: its
// signature flow's tokens carry JWS headers as the auth service's do.
const fakeES256Client = "cid-es"

func newFakeAuth() *fakeAuth {
	return &fakeAuth{logins: map[string]bool{}, signCodes: map[string]int32{}, keys: map[int32]*rsa.PublicKey{},
		refresh: map[string]bool{}, access: map[string]bool{}, sigClients: map[string]int{}}
}

func (f *fakeAuth) issue(w http.ResponseWriter) { f.issueWith(w, true) }

// issueWith answers a token request; an OAuth 2.0 refresh's answer has no
// id token, as the auth service's.
func (f *fakeAuth) issueWith(w http.ResponseWriter, withID bool) {
	ts := tokenSet{Access: rnd(), Refresh: rnd()}
	if withID {
		ts.ID = rnd()
	}
	f.refresh[ts.Refresh] = false
	f.access[ts.Access] = true
	_ = json.NewEncoder(w).Encode(ts)
}

func rnd() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

const fakeCSRF = "Q2hhbmdlTWVDaGFuZ2VNZUNoYW5nZU1lQ2hhbmdlTWU"

func (f *fakeAuth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if strings.Contains(r.RequestURI, "#") {
		f.fragments++
	}
	w.Header().Set("Content-Type", "application/json")
	var in map[string]any
	if r.Method == http.MethodPost && r.Header.Get("Content-Type") == "application/json" {
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
	}
	str := func(k string) string { s, _ := in[k].(string); return s }
	if r.Method == http.MethodPost && r.Header.Get("Content-Type") == "application/x-www-form-urlencoded" {
		if err := r.ParseForm(); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		str = r.PostForm.Get
	}
	switch r.Method + " " + r.URL.Path {
	case "GET /oauth2/authorize":
		http.SetCookie(w, &http.Cookie{Name: "fris_csrf", Value: fakeCSRF, Path: "/oauth2"})
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<form><input type="hidden" name="csrf_token" value="` + fakeCSRF + `"></form>`))
	case "POST /oauth2/authorize":
		c, err := r.Cookie("fris_csrf")
		if err != nil || c.Value != r.PostFormValue("csrf_token") || r.PostFormValue("password") != "pw-123456" ||
			r.Header.Get("Sec-Fetch-Site") != "same-origin" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		code := rnd()
		f.logins[code] = true
		w.Header().Set("Location", "http://localhost:8888/callback?code="+code+"&state=x")
		w.WriteHeader(http.StatusFound)
	case "POST /oauth2/register":
		der, _ := base64.StdEncoding.DecodeString(str("base64EncodedPublicKey"))
		k, err := x509.ParsePKIXPublicKey(der)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		id := int32(len(f.keys) + 1)
		f.keys[id] = k.(*rsa.PublicKey)
		_, _ = w.Write([]byte(`{"userId":` + string(rune('0'+id%10)) + `,"keyId":` + itoa(id) + `}`))
	case "POST /oauth2/sign_request":
		id, _ := in["keyId"].(float64)
		if f.keys[int32(id)] == nil {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		code := rnd()
		f.signCodes[code] = int32(id)
		_, _ = w.Write([]byte(`{"code":"` + code + `","expirationDate":1,"algoritm":"SHA512withRSA"}`))
	case "POST /oauth2/token":
		switch {
		case str("refresh_token") != "":
			if f.failRefresh {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			spent, ok := f.refresh[str("refresh_token")]
			if !ok || spent {
				if spent {
					f.reuses++
				}
				w.WriteHeader(http.StatusForbidden)
				return
			}
			f.refresh[str("refresh_token")] = true
			if str("grant_type") != "" && r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
				f.jsonGrants++
			}
			f.issueWith(w, str("grant_type") == "")
		case str("signature") != "":
			id, ok := f.signCodes[str("code")]
			delete(f.signCodes, str("code"))
			sig, _ := base64.StdEncoding.DecodeString(str("signature"))
			sum := sha512.Sum512([]byte(str("code")))
			cl := str("client_id")
			if !ok || (cl != "cid" && cl != fakeES256Client) || rsa.VerifyPKCS1v15(f.keys[id], crypto.SHA512, sum[:], sig) != nil {
				f.badSigs++
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			f.sigClients[cl]++
			if cl == fakeES256Client {
				// A spec-shaped answer to an ES256 client.
				jws := func(alg string) string {
					return base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"`+alg+`","kid":"k","typ":"JWT"}`)) + ".e30." + rnd()
				}
				_ = json.NewEncoder(w).Encode(tokenSet{Access: jws("ES256"), ID: jws("ES256"), Refresh: jws("RS256")})
				return
			}
			f.issue(w)
		case f.logins[str("code")] && str("client_secret") == "secret-123456789":
			delete(f.logins, str("code"))
			f.issue(w)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	case "GET /oauth2/tokeninfo", "GET /read":
		tok, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if bearer && !f.access[tok] {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		if !bearer && r.URL.Path == "/oauth2/tokeninfo" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		if !bearer {
			f.anonReads++
			if f.cacheAnon && f.anonReads > 1 {
				w.Header().Set("X-Cache", "hit")
			}
		}
		_, _ = w.Write([]byte(`{"totalcount":1}`))
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func itoa(i int32) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// runWindow is each measured run of the suites' tests: a run in which no
// request completes fails (a benchmark of nothing), and on a busy machine
// under -race one request can take most of a second.
const runWindow = "1s"

func authArgs(url string, extra ...string) []string {
	return append([]string{"-gateway", url, "-client-id", "cid", "-client-secret", "secret-123456789",
		"-user-email", "u@example.org", "-user-password", "pw-123456", "-connections", "3", "-token-connections", "3",
		"-duration", runWindow, "-warmup", "100ms", "-rsa-duration", "100ms", "-token-duration", runWindow, "-token-rounds", "2", "-bearer-rounds", "1", "-bearer-path", "/read"}, extra...)
}

func TestAuthAndBearerSuites(t *testing.T) {
	fa := newFakeAuth()
	fa.cacheAnon = true
	srv := httptest.NewServer(fa)
	defer srv.Close()
	js := filepath.Join(t.TempDir(), "out.json")
	rc, out, errs := runBench(t, authArgs(srv.URL, "-suites", "auth,bearer", "-json", js, "-watch", "me="+itoa(int32(os.Getpid())))...)
	if rc != 0 {
		t.Fatalf("rc %d\n%s\n%s", rc, out, errs)
	}
	for _, want := range []string{"#### Token endpoint", "| refresh | 2 | **", "| signature | 2 | **", "| refresh | 1 | 1 |", "| refresh | 2 | 1 |",
		"| signature | 1 | 2 |", "| signature | 2 | 2 |", "server's signatures only", "2 rounds of all flows", "| refresh-oauth | 2 | **", "× RS256's rate", "| EdDSA |", "| ES256 |", "× baseline",
		"`sign_request`", "#### Bearer token check", "| bearer token | 1 |", "Not like for like", "signatures at the raw rate"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	fa.mu.Lock()
	if fa.reuses != 0 || fa.fragments != 0 || fa.badSigs != 0 || fa.jsonGrants != 0 {
		t.Errorf("reuses %d, fragments sent %d, bad signatures %d, OAuth refreshes sent as JSON %d", fa.reuses, fa.fragments, fa.badSigs, fa.jsonGrants)
	}
	fa.mu.Unlock()
	var rep Report
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Token == nil || len(rep.Token.Flows) != 6 || len(rep.Token.RSA) != 7 || len(rep.Token.Summary) != 3 || rep.Token.SignsPerSec <= 0 || rep.Bearer == nil || len(rep.Bearer.Results) != 2 {
		t.Fatalf("report: %s", b)
	}
	// Each algorithm measured before and after; the refresh flows compared
	// with the spec-shaped one.
	if len(rep.Token.Algs) != 6 || len(rep.Token.Refresh) != 2 || rep.Token.Refresh[0].RateRatio != 1 || rep.Token.Refresh[1].Name != "refresh-oauth" || rep.Token.Refresh[1].RateRatio <= 0 {
		t.Fatalf("algs %+v, refresh comparison %+v", rep.Token.Algs, rep.Token.Refresh)
	}
	for i, s := range rep.Token.Summary {
		var units, limit float64
		for _, f := range rep.Token.Flows {
			if f.Name == s.Name {
				units += f.M.UnitsPerSec
				limit += f.Limit
			}
		}
		if s.Name != []string{"refresh", "refresh-oauth", "signature"}[i] || s.Rounds != 2 || math.Abs(s.Share-units/limit) > 1e-9 ||
			s.MinShare > s.Share*(1+1e-9) || s.MaxShare < s.Share*(1-1e-9) || s.Judged != judged(s.Name) || s.Met != (s.Share >= 0.7 || !s.Judged) {
			t.Errorf("summary %d: %+v (rounds: %v responses/s against limits %v)", i, s, units, limit)
		}
	}
	for _, f := range rep.Token.Flows {
		if f.M.Units == 0 || f.M.Errors != 0 || f.Limit <= 0 || f.Share <= 0 || len(f.M.CPUMicrosPerUnit) == 0 {
			t.Errorf("%s: %+v", f.Name, f.M)
		}
		// The signature flow's requests alternate: two per token response.
		if f.Name == "signature" && (len(f.M.Steps) != 2 || f.M.Requests < 2*f.M.Units-uint64(rep.Token.Sessions)) {
			t.Errorf("signature steps %+v, requests %d, units %d", f.M.Steps, f.M.Requests, f.M.Units)
		}
	}
	if !rep.Bearer.AnonymousCached || rep.Bearer.Without <= 0 || rep.Bearer.With <= 0 {
		t.Errorf("bearer %+v", rep.Bearer)
	}
}

func TestAuthSuiteFailsOnErrorResponses(t *testing.T) {
	fa := newFakeAuth()
	fa.failRefresh = true
	srv := httptest.NewServer(fa)
	defer srv.Close()
	rc, out, errs := runBench(t, authArgs(srv.URL, "-suites", "auth")...)
	if rc != 1 || !strings.Contains(errs, "status 503") {
		t.Fatalf("rc %d, want 1\n%s\n%s", rc, out, errs)
	}
	// Every chain died on its first error; the flow ended instead of
	// waiting for a chain, and the tables were still printed.
	if !strings.Contains(out, "| refresh | 1 |") {
		t.Errorf("no table:\n%s", out)
	}
}

func TestAuthFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-suites", "auth"}, // no credentials
		{"-suites", "nope", "/x"},
		{"-suites", "bearer", "-client-id", "c", "-client-secret", "s", "-user-email", "e", "-user-password", "p", "/x"}, // paths without mdr
		{"-suites", "mdr"}, // no path
	} {
		if rc, _, _ := runBench(t, args...); rc != 2 {
			t.Errorf("%q: rc %d, want 2", args, rc)
		}
	}
}

func TestSessionOf(t *testing.T) {
	for _, tc := range []struct {
		u  string
		i  int
		ok bool
	}{{"http://h/oauth2/token#3", 3, true}, {"http://h/oauth2/token", 0, false}, {"http://h/x#9", 0, false}, {"http://h/x#-1", 0, false}} {
		if i, ok := sessionOf(tc.u, 4); ok != tc.ok || (ok && i != tc.i) {
			t.Errorf("%s: %d %v", tc.u, i, ok)
		}
	}
}

// -token-flows refresh runs only the refresh flow and registers no keys.
func TestAuthSuiteRefreshOnly(t *testing.T) {
	fa := newFakeAuth()
	srv := httptest.NewServer(fa)
	defer srv.Close()
	js := filepath.Join(t.TempDir(), "out.json")
	rc, out, errs := runBench(t, authArgs(srv.URL, "-suites", "auth", "-token-flows", "refresh", "-json", js)...)
	if rc != 0 {
		t.Fatalf("rc %d\n%s\n%s", rc, out, errs)
	}
	var rep Report
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Token == nil || len(rep.Token.Flows) != 2 || len(rep.Token.Summary) != 1 || rep.Token.Summary[0].Name != "refresh" {
		t.Fatalf("report: %s", b)
	}
	for _, f := range rep.Token.Flows {
		if f.Name != "refresh" || f.M.Units == 0 {
			t.Errorf("flow %s: %+v", f.Name, f.M)
		}
	}
	fa.mu.Lock()
	if len(fa.keys) != 0 {
		t.Errorf("%d keys registered for a refresh-only run", len(fa.keys))
	}
	fa.mu.Unlock()
	if rc, _, _ := runBench(t, authArgs(srv.URL, "-suites", "auth", "-token-flows", "nope")...); rc != 2 {
		t.Errorf("rc %d with an unknown flow, want 2", rc)
	}
}

// With an ES256 client, the signature flow runs for it too: its token
// requests name that client, its responses' signatures are counted from
// their headers, and it is compared with the RS256 client's, not judged by
// the crypto limit.
func TestAuthSuiteSignatureES256(t *testing.T) {
	fa := newFakeAuth()
	srv := httptest.NewServer(fa)
	defer srv.Close()
	js := filepath.Join(t.TempDir(), "out.json")
	rc, out, errs := runBench(t, authArgs(srv.URL, "-suites", "auth", "-token-flows", "signature", "-es256-client-id", fakeES256Client, "-token-rounds", "1", "-json", js, "-watch", "me="+itoa(int32(os.Getpid())))...)
	if rc != 0 {
		t.Fatalf("rc %d\n%s\n%s", rc, out, errs)
	}
	for _, want := range []string{"Signature flow per client algorithm", "| signature-es256 | access ES256, id ES256, refresh RS256 |",
		"| signature-es256 | 1 | **", "not judged: see its ratio against signature below"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	var rep Report
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Token == nil || len(rep.Token.Signature) != 2 || rep.Token.Signature[0].Name != "signature" || rep.Token.Signature[0].RateRatio != 1 ||
		rep.Token.Signature[1].Name != "signature-es256" || rep.Token.Signature[1].RateRatio <= 0 || rep.Token.Signature[1].ServerCPURatio <= 0 {
		t.Fatalf("signature comparison: %s", b)
	}
	for _, f := range rep.Token.Flows {
		if f.Name == "signature-es256" && (f.ServerSignatures != 1 || f.Carried != "access ES256, id ES256, refresh RS256" || f.M.Units == 0) {
			t.Errorf("signature-es256 round %d: %d RSA signatures, carried %q, %d responses", f.Round, f.ServerSignatures, f.Carried, f.M.Units)
		}
	}
	for _, s := range rep.Token.Summary {
		if s.Name == "signature-es256" && s.Judged {
			t.Errorf("signature-es256 judged by the crypto limit: %+v", s)
		}
	}
	fa.mu.Lock()
	defer fa.mu.Unlock()
	if fa.sigClients["cid"] == 0 || fa.sigClients[fakeES256Client] == 0 || fa.badSigs != 0 {
		t.Errorf("signature token requests per client %v, bad signatures %d", fa.sigClients, fa.badSigs)
	}
	// Named without its client, the flow is refused.
	if rc, _, _ := runBench(t, authArgs(srv.URL, "-suites", "auth", "-token-flows", "signature-es256")...); rc != 2 {
		t.Errorf("rc %d for signature-es256 without -es256-client-id, want 2", rc)
	}
}
