package login

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestHeader: the login, forgot-password, reset and error pages carry the
// Explorer's header: its brand, linking to the Explorer, and the language
// switch inside it (a link, no script), the switch keeping the request.
func TestHeader(t *testing.T) {
	header := regexp.MustCompile(`(?s)<header class="bar">\s*<a class="brand" href="/explorer/">FRIS Explorer</a>.*?<nav aria-label="Language"><ul><li><a href="([^"]+)" lang="de" hreflang="de">Deutsch</a></li></ul></nav>.*?</header>`)
	for _, target := range []string{
		"/oauth2/authorize?client_id=c1&state=s1&code_challenge=ch&code_challenge_method=S256",
		"/oauth2/forgot?client_id=c1&state=s1",
		"/oauth2/reset?token=good-token",
		"/oauth2/authorize?client_id=c1&state=a&state=b",
	} {
		rec := httptest.NewRecorder()
		New(Config{Client: &accountAuth{}, Prefix: "/oauth2", MaxForm: 4096}).ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		body := rec.Body.String()
		m := header.FindStringSubmatch(body)
		if m == nil {
			t.Errorf("%s: no Explorer header with a language switch:\n%s", target, body)
			continue
		}
		// The switch is a link; the one script is the passkey sign-in's.
		if strings.Contains(strings.ReplaceAll(body, `<script src="/oauth2/passkey.js" defer></script>`, ""), "<script") {
			t.Errorf("%s: a script", target)
		}
		if strings.Contains(target, "state=s1") && !strings.Contains(htmlUnescape(m[1]), "state=s1") {
			t.Errorf("%s: the switch %q loses the request", target, m[1])
		}
	}
}
