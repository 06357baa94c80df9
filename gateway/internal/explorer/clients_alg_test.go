package explorer

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"fris.dev/pkg/identity"
)

// TestClientAlgorithm: the create and edit forms offer the three
// algorithms, the edit form with the client's own selected; a choice
// reaches auth, an edit without the field keeps the algorithm, and an
// unknown one is refused before auth is asked.
func TestClientAlgorithm(t *testing.T) {
	e, fc := newClientsEnv(t, "openid", identity.ScopeOperator)
	b := e.browser()
	b.signIn()
	sess, _ := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	tok := sess.CSRF
	body := b.do("GET", ClientsPath, nil).Body.String()
	wantBody(t, "clients page", body, []string{`<select id="new-alg" name="alg" aria-describedby="new-alg-hint"><option value="RS256">RS256</option><option value="ES256">ES256</option><option value="EdDSA">EdDSA</option></select>`,
		"Samply clients verify"}, nil)

	rec := b.do("POST", ClientCreatePath, url.Values{CSRFField: {tok}, "name": {"Fast app"}, "client_id": {"fast"}, "type": {"UNDEFINED"}, "alg": {"ES256"}})
	if rec.Code != http.StatusOK {
		t.Fatalf("create: %d\n%s", rec.Code, rec.Body)
	}
	if c := fc.find("fast"); c == nil || c.GetAlg() != "ES256" {
		t.Fatalf("created %v", c)
	}
	body = b.do("GET", ClientsPath, nil).Body.String()
	i := strings.Index(body, `data-client="fast"`)
	if i < 0 {
		t.Fatal("the new client is not listed")
	}
	item := body[i:]
	item = item[:strings.Index(item, "</li>\n")]
	wantBody(t, "the client's entry", item, []string{"<dt>Token signature</dt><dd>ES256</dd>", `<option value="ES256" selected>ES256</option>`}, []string{`<option value="RS256" selected>`})

	if rec := b.do("POST", ClientUpdatePath, url.Values{CSRFField: {tok}, "client_id": {"fast"}, "name": {"Fast app"}, "alg": {"EdDSA"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("update: %d\n%s", rec.Code, rec.Body)
	}
	if c := fc.find("fast"); c.GetAlg() != "EdDSA" {
		t.Fatalf("after the edit: %v", c.GetAlg())
	}
	if rec := b.do("POST", ClientUpdatePath, url.Values{CSRFField: {tok}, "client_id": {"fast"}, "name": {"Fast app"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("update without alg: %d\n%s", rec.Code, rec.Body)
	}
	if c := fc.find("fast"); c.GetAlg() != "EdDSA" {
		t.Fatalf("an edit without the field changed the algorithm: %v", c.GetAlg())
	}
	before := len(fc.seen())
	for _, p := range []string{ClientCreatePath, ClientUpdatePath} {
		rec := b.do("POST", p, url.Values{CSRFField: {tok}, "client_id": {"fast"}, "name": {"x"}, "type": {"MDR"}, "alg": {"HS256"}})
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "token signature") {
			t.Errorf("%s with HS256: %d", p, rec.Code)
		}
	}
	if got := fc.seen()[before:]; len(got) != 0 {
		t.Errorf("auth was asked: %v", got)
	}
	de := b.do("GET", ClientsPath, nil, "Accept-Language", "de").Body.String()
	wantBody(t, "German clients page", de, []string{"Token-Signatur", "Samply-Clients"}, nil)
}
