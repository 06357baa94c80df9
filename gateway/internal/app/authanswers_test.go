package app

import (
	"flag"
	"io"
	"net/http"
	"testing"
)

// -auth-answers reaches group A's routes: each shape's names on the wire,
// the lists' envelopes in the samply shape, and the default unchanged.
func TestAuthAnswersFlag(t *testing.T) {
	for _, tc := range []struct {
		args                       []string
		signRequest, clients, user string
	}{
		{nil, `{"code":"c","expirationDate":1700000000,"algoritm":"SHA512withRSA","algorithm":"SHA512withRSA","exp":1700000000}`,
			`[{"clientId":"c1","name":"Client","description":"","redirectUrl":"","type":"MDR"}]`,
			`{"real_name":"Ada","contact_information":"","locality":null,"email":"ada@example.org","email_verified":false,"sub":"42","name":"Ada","id":""}`},
		{[]string{"-auth-answers", "spec"}, `{"code":"c","expirationDate":1700000000,"algoritm":"SHA512withRSA"}`,
			`[{"clientId":"c1","name":"Client","description":"","redirectUrl":"","type":"MDR"}]`,
			`{"real_name":"Ada","contact_information":"","locality":null,"email":"ada@example.org","email_verified":false}`},
		{[]string{"-auth-answers", "samply"}, `{"code":"c","exp":1700000000,"algorithm":"SHA512withRSA"}`,
			`{"clients":[{"clientId":"c1","name":"Client","description":"","redirectUrl":"","type":"MDR"}]}`,
			`{"id":"","name":"Ada","email":"ada@example.org","email_verified":false,"contact_information":""}`},
	} {
		e := newEnv(t, true, tc.args...)
		rec := e.do(t, http.MethodPost, "/oauth2/sign_request", `{"keyId":1}`, "Content-Type", "application/json")
		if rec.Code != 200 {
			t.Fatalf("%v sign request: %d %s", tc.args, rec.Code, rec.Body)
		}
		jsonEqual(t, rec.Body.String(), tc.signRequest)
		rec = e.do(t, http.MethodGet, "/oauth2/clients", "")
		jsonEqual(t, rec.Body.String(), tc.clients)
		rec = e.do(t, http.MethodGet, "/oauth2/userinfo", "", "Authorization", "Bearer good")
		if rec.Code != 200 {
			t.Fatalf("%v userinfo: %d %s", tc.args, rec.Code, rec.Body)
		}
		jsonEqual(t, rec.Body.String(), tc.user)
		if ct := rec.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Fatalf("%v content type %q", tc.args, ct)
		}
	}
}

func TestAuthAnswersFlagRefusesOtherValues(t *testing.T) {
	for _, v := range []string{"", "all", "SPEC"} {
		var cfg Config
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		cfg.RegisterFlags(fs)
		if err := fs.Parse([]string{"-auth-answers", v}); err == nil {
			t.Fatalf("-auth-answers %q accepted", v)
		}
	}
}
