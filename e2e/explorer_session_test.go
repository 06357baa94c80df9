package e2e

import (
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// signInHTTP signs the demo user in to the Explorer with a plain HTTP
// client, as a browser would: the login page's form, its hidden fields,
// the redirects. It returns the client, whose jar holds the session.
func signInHTTP(t *testing.T, s *Stack) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	res, err := c.Get(s.URL + "/explorer/login?return=" + url.QueryEscape("/explorer/"))
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, res)
	if res.StatusCode != 200 || res.Request.URL.Path != "/oauth2/authorize" {
		t.Fatalf("sign-in start: %d at %s\n%s", res.StatusCode, res.Request.URL, body)
	}
	form := url.Values{"email": {demoEmail}, "password": {demoPass}}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`).FindAllStringSubmatch(body, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	res, err = c.PostForm(s.URL+"/oauth2/authorize", form)
	if err != nil {
		t.Fatal(err)
	}
	body = readAll(t, res)
	if res.StatusCode != 200 || res.Request.URL.Path != "/explorer/" || !strings.Contains(body, "Ada Lovelace") {
		t.Fatalf("sign-in: %d at %s\n%s", res.StatusCode, res.Request.URL, body)
	}
	return c
}

func readAll(t *testing.T, res *http.Response) string {
	t.Helper()
	defer res.Body.Close()
	var b strings.Builder
	if _, err := io.Copy(&b, res.Body); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func getPage(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	res, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, res)
	return res.StatusCode, body
}

// auditCount counts the auth service's audit lines of an action.
func auditCount(s *Stack, action string) int {
	n := 0
	for _, line := range strings.Split(s.Auth.logs(), "\n") {
		if strings.Contains(line, `"action":"`+action+`"`) && strings.Contains(line, `"outcome":"success"`) {
			n++
		}
	}
	return n
}

// TestExplorerSession: what the session does on the server, seen over
// HTTP. A signed-in user sees the private namespace their scopes grant
// and an anonymous browser does not; the access token is refreshed
// before it expires without the user noticing; an operator cutting the
// user off signs the session out.
func TestExplorerSession(t *testing.T) {
	t.Parallel()
	// Access tokens live 62 s and are refreshed in their last minute: the
	// second request after signing in refreshes.
	s := explorerStack(t, Options{AuthArgs: []string{"-access-ttl", "62s"}})
	s.MDRCLI(t, 0, "import", filepath.Join(repoRoot, "e2e/testdata/extra.json"))
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", "mdr:secret", demoEmail)
	anon := &http.Client{Timeout: 30 * time.Second}
	user := signInHTTP(t, s)

	secret := "/explorer/dataelements/urn:secret:dataelement:1:1"
	if code, body := getPage(t, anon, s.URL+"/explorer/"); code != 200 || strings.Contains(body, "Secret namespace") {
		t.Errorf("anonymous home: %d, secret namespace shown: %t", code, strings.Contains(body, "Secret namespace"))
	}
	if code, _ := getPage(t, anon, s.URL+secret); code != 404 {
		t.Errorf("anonymous private element: %d, want 404", code)
	}
	if code, body := getPage(t, user, s.URL+"/explorer/"); code != 200 || !strings.Contains(body, "Secret namespace") {
		t.Errorf("signed-in home: %d, secret namespace shown: %t", code, strings.Contains(body, "Secret namespace"))
	}
	if code, body := getPage(t, user, s.URL+secret); code != 200 || !strings.Contains(body, "Hidden element") {
		t.Errorf("signed-in private element: %d\n%s", code, body)
	}

	// Records, ranges, units and slot values (the extra namespace "recs").
	for _, tc := range []struct {
		path, lang string
		want       []string
	}{
		{"/explorer/namespaces/recs", "en", []string{"Datensätze", `href="/explorer/records/urn:recs:record:1:1"`, "Body measures", "Record", `href="/explorer/dataelements/urn:recs:dataelement:3:2"`}},
		{"/explorer/records/urn:recs:record:1:1", "en", []string{"<h1>Body measures</h1>", "Order", "Height", "Weight"}},
		{"/explorer/records/urn:recs:record:1:1", "de", []string{"<h1>Körpermaße</h1>", "Reihenfolge", "Gewicht"}},
		{"/explorer/dataelements/urn:recs:dataelement:1:1", "en", []string{"<h1>Weight</h1>", "FLOAT", "FLOATRANGE", "0&lt;=x&lt;=500", "kg", "source", "scale"}},
		{"/explorer/dataelements/urn:recs:dataelement:1:1", "de", []string{"<h1>Gewicht</h1>", "Körpergewicht", "Einheit", "Regel"}},
	} {
		_, body := s.Get(t, tc.path, 200, "Accept-Language", tc.lang)
		for _, w := range tc.want {
			if !strings.Contains(string(body), w) {
				t.Errorf("%s (%s) lacks %q", tc.path, tc.lang, w)
			}
		}
		if tc.path == "/explorer/records/urn:recs:record:1:1" && strings.Index(string(body), "urn:recs:dataelement:2:1") > strings.Index(string(body), "urn:recs:dataelement:1:1") {
			t.Errorf("the record's members are not in their order")
		}
	}

	before := auditCount(s, "auth.token.refresh_token")
	time.Sleep(2500 * time.Millisecond)
	if code, body := getPage(t, user, s.URL+"/explorer/"); code != 200 || !strings.Contains(body, "Ada Lovelace") || !strings.Contains(body, "Secret namespace") {
		t.Errorf("after the refresh: %d, signed in %t", code, strings.Contains(body, "Ada Lovelace"))
	}
	// The audit line reaches the test through auth's stderr pipe, which a
	// loaded machine reads a moment later than the answer arrives.
	after := auditCount(s, "auth.token.refresh_token")
	for wait := time.Now().Add(5 * time.Second); after == before && time.Now().Before(wait); {
		time.Sleep(50 * time.Millisecond)
		after = auditCount(s, "auth.token.refresh_token")
	}
	if after != before+1 {
		t.Errorf("%d refreshes, want 1", after-before)
	}

	s.AuthCLI(t, 0, "revoke-user", demoEmail)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, body := getPage(t, user, s.URL+"/explorer/")
		if !strings.Contains(body, "Ada Lovelace") {
			if strings.Contains(body, "Secret namespace") {
				t.Error("signed out, but the private namespace is still shown")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the session outlived revoke-user by 10 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
