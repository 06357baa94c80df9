package e2e

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"fris.dev/pkg/identity"
)

// documentedPosts is every POST path docs/interface.md lists (a test in
// gateway/internal/app holds the document to the route table), {id}
// replaced by id, those that end a session last.
func documentedPosts(t *testing.T, id string) []string {
	t.Helper()
	doc, err := os.ReadFile("../docs/interface.md")
	if err != nil {
		t.Fatal(err)
	}
	var out, last []string
	for _, m := range regexp.MustCompile("(?m)^\\| POST \\| `(/[^`]+)`").FindAllStringSubmatch(string(doc), -1) {
		p := strings.ReplaceAll(m[1], "{id}", id)
		// The forms that end the session go last: accepted, they would
		// sign the test out of the others.
		if strings.HasSuffix(p, "/logout") || strings.HasSuffix(p, "/signout-everywhere") {
			last = append(last, p)
			continue
		}
		out = append(out, p)
	}
	return append(out, last...)
}

// utf8Fields are the fields of every form of the login pages, the account
// pages and the console, each holding a byte that is not UTF-8.
var utf8Fields = []string{"email", "password", "password2", "token", "name", "role", "other", "confirm", "client_id",
	"site_id", "id", "current", "new", "new2", "description", "redirect_urls", "ceremony", "credential", "title",
	"grant_type", "code", "refresh_token", "client_secret", "second_factor_code", "proof", "secret", "uri"}

// TestAttackNotUTF8: `%ff` (a byte that is no UTF-8) in every form the
// gateway serves, each sent as its page sends it (with the session and
// CSRF token the page gives, so it would reach the service), answers 400 in
// the path's format, never 500: the login form, forgot, reset, verify and
// the passkey sign-in; every POST of the Explorer (account, console,
// inquiries) as the docs list them, a multipart inquiry form too; the OAuth
// endpoints' forms and JSON bodies. No ERROR line in the gateway's log.
func TestAttackNotUTF8(t *testing.T) {
	t.Parallel()
	s := explorerStack(t, Options{})
	s.AuthCLI(t, 0, "create-client", "-client-id", demoClient, "-secret", demoSecret, "-name", "E2E Client", "-redirect-url", callback)
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator+","+identity.ScopeResearcher, demoEmail)
	op := signInHTTP(t, s)
	_, home := getPage(t, op, s.URL+"/explorer/")
	m := csrfRE.FindStringSubmatch(home)
	if m == nil {
		t.Fatalf("no CSRF token on the home page:\n%s", home)
	}
	bad := url.Values{"csrf_token": {m[1]}}
	for _, f := range utf8Fields {
		bad.Set(f, "\xff")
	}
	bad.Set("confirm", "yes")

	// One page of the login pages gives its CSRF cookie and token; the
	// forms share them.
	visitor := from127(t, s, "127.0.0.1", nil)
	login, _ := visitor.page(t, oauth+"/authorize?client_id="+demoClient, 200)
	if login.Get("csrf_token") == "" {
		t.Fatal("no CSRF token on the login page")
	}

	jsonOnly := map[string]bool{oauth + "/register": true, oauth + "/sign_request": true, oauth + "/signRequest": true}
	var posts int
	for _, path := range documentedPosts(t, "x0000000000000000") {
		form := url.Values{}
		for k, v := range bad {
			form[k] = v
		}
		var res *http.Response
		var body []byte
		switch {
		case strings.HasPrefix(path, "/explorer/"):
			r, err := op.PostForm(s.URL+path, form)
			if err != nil {
				t.Fatal(err)
			}
			res, body = r, []byte(readAll(t, r))
		case strings.HasPrefix(path, oauth+"/"):
			for k, v := range login {
				if k != "email" && k != "password" {
					form[k] = v
				}
			}
			res, body = visitor.postForm(t, path, form)
		default:
			continue
		}
		posts++
		st, ct := res.StatusCode, res.Header.Get("Content-Type")
		switch {
		case jsonOnly[path] && st == http.StatusUnsupportedMediaType:
			// Takes no form at all: its JSON is tried below.
		case st != http.StatusBadRequest:
			t.Errorf("POST %s with %%ff: %d, want 400\n%.600s", path, st, body)
		case strings.HasPrefix(path, "/explorer/") || strings.HasPrefix(ct, "text/html"):
			if !strings.HasPrefix(ct, "text/html") || !bytes.Contains(body, []byte("not valid UTF-8")) {
				t.Errorf("POST %s with %%ff: %s, want the page saying why\n%.600s", path, ct, body)
			}
		case !bytes.Contains(body, []byte(`"error":"invalid_request"`)):
			t.Errorf("POST %s with %%ff: want an OAuth error body, got %s %s", path, ct, body)
		}
	}
	if posts < 30 {
		t.Errorf("only %d POST paths found in docs/interface.md", posts)
	}

	// The inquiry form as browsers send it: multipart.
	var mp bytes.Buffer
	w := multipart.NewWriter(&mp)
	_ = w.WriteField("csrf_token", m[1])
	_ = w.WriteField("title", "\xff")
	_ = w.Close()
	res, err := op.Post(s.URL+"/explorer/inquiries", w.FormDataContentType(), &mp)
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, res); res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "not valid UTF-8") {
		t.Errorf("multipart inquiry form with \\xff: %d\n%.600s", res.StatusCode, body)
	}

	// JSON bodies of group A, with a raw byte that is no UTF-8.
	for _, tc := range []struct{ path, body string }{
		{oauth + "/register", "{\"email\":\"\xff@lab.example\",\"password\":\"long enough password\",\"real_name\":\"x\"}"},
		{oauth + "/token", "{\"grant_type\":\"refresh_token\",\"refresh_token\":\"\xff\"}"},
		{oauth + "/sign_request", "{\"email\":\"\xff\",\"key_id\":\"1\"}"},
		{oauth + "/introspect", "{\"token\":\"\xff\"}"},
	} {
		res, v := postJSON(t, s, tc.path, tc.body)
		if res.StatusCode != http.StatusBadRequest || field(t, v, "error") != "invalid_request" {
			t.Errorf("POST %s with JSON not UTF-8: %d %v", tc.path, res.StatusCode, v)
		}
	}
	// And the researchers' API, whose JSON grpc-gateway reads itself.
	if st, access, _ := passwordSignIn(t, s, demoEmail, demoPass); st == http.StatusFound {
		res, b := s.Do(t, http.MethodPost, "/broker/rest/searchbroker/researcher/inquiries", strings.NewReader("{\"title\":\"\xff\"}"),
			"Content-Type", "application/json", "Authorization", "Bearer "+access)
		if res.StatusCode != http.StatusBadRequest || !bytes.Contains(b, []byte("not valid UTF-8")) {
			t.Errorf("researcher API with JSON not UTF-8: %d %s", res.StatusCode, b)
		}
	} else {
		t.Errorf("sign-in for the researchers' API: %d", st)
	}
	if logs := s.Gateway.logs(); strings.Contains(logs, `"level":"ERROR"`) {
		t.Errorf("the gateway logged an ERROR for a client's mistake:\n%s", logs)
	}
}
