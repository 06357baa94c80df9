package login

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	authv1 "fris.dev/proto/auth/v1"
)

// passkeyAuth adds the passkey sign-in to the fake: ceremony "cer" and the
// answer "good" sign Ada in.
type passkeyAuth struct {
	fakeAuth
	finished []*authv1.FinishPasskeyLoginRequest
}

func (f *passkeyAuth) BeginPasskeyLogin(_ context.Context, in *authv1.BeginPasskeyLoginRequest, _ ...grpc.CallOption) (*authv1.BeginPasskeyLoginResponse, error) {
	if _, err := f.check(in.GetRequest()); err != nil {
		return nil, err
	}
	return &authv1.BeginPasskeyLoginResponse{Ceremony: "cer", Options: `{"publicKey":{"challenge":"AAAA","rpId":"client.example"}}`}, nil
}

func (f *passkeyAuth) FinishPasskeyLogin(_ context.Context, in *authv1.FinishPasskeyLoginRequest, _ ...grpc.CallOption) (*authv1.LoginResponse, error) {
	f.mu.Lock()
	f.finished = append(f.finished, in)
	f.mu.Unlock()
	res, err := f.check(in.GetRequest())
	if err != nil {
		return nil, err
	}
	if in.GetCeremony() != "cer" || in.GetCredential() != "good" {
		return nil, status.Error(codes.Unauthenticated, "the passkey was not accepted")
	}
	return &authv1.LoginResponse{Code: "pk-code", RedirectUri: res.GetRedirectUri(), Device: "DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD"}, nil
}

func postForm(h http.Handler, path string, form url.Values, csrf bool) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if csrf {
		req.AddCookie(&http.Cookie{Name: CSRFCookie, Value: goodCSRF})
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// The begin path answers the ceremony's options as JSON for the page's
// form (CSRF checked); the answer posted with the form redirects to the
// client with the code, as a password does; a refused passkey shows the
// page again with the message; the script is served.
func TestPasskeySignIn(t *testing.T) {
	f := &passkeyAuth{}
	h := New(Config{Client: f, Prefix: "/oauth2"})
	form := url.Values{"client_id": {"c1"}, "state": {"s1"}, CSRFField: {goodCSRF}, "email": {""}, "password": {""}}

	rec := postForm(h, "/oauth2/passkey", form, true)
	var begun struct {
		Ceremony string `json:"ceremony"`
		Options  struct {
			PublicKey struct {
				Challenge string `json:"challenge"`
			} `json:"publicKey"`
		} `json:"options"`
	}
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &begun) != nil || begun.Ceremony != "cer" || begun.Options.PublicKey.Challenge != "AAAA" {
		t.Fatalf("begin = %d %s", rec.Code, rec.Body)
	}
	if rec := postForm(h, "/oauth2/passkey", form, false); rec.Code != http.StatusBadRequest {
		t.Fatalf("begin without the CSRF cookie = %d", rec.Code)
	}
	bad := url.Values{"client_id": {"nosuch"}, CSRFField: {goodCSRF}}
	if rec := postForm(h, "/oauth2/passkey", bad, true); rec.Code != http.StatusNotFound || !strings.Contains(rec.Header().Get("Content-Type"), "json") {
		t.Fatalf("begin for an unknown client = %d %s", rec.Code, rec.Body)
	}

	signIn := url.Values{}
	for k, v := range form {
		signIn[k] = v
	}
	signIn.Set(PasskeyCeremonyField, "cer")
	signIn.Set(PasskeyAnswerField, "good")
	rec = postForm(h, "/oauth2/authorize", signIn, true)
	if rec.Code != http.StatusFound || rec.Header().Get("Location") != registered+"?code=pk-code&state=s1" {
		t.Fatalf("finish = %d %q", rec.Code, rec.Header().Get("Location"))
	}
	if len(f.logins) != 0 || len(f.finished) != 1 {
		t.Fatalf("password logins %d, passkey %d", len(f.logins), len(f.finished))
	}

	signIn.Set(PasskeyAnswerField, "forged")
	rec = postForm(h, "/oauth2/authorize", signIn, true)
	if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), WrongPasskey) || !strings.Contains(rec.Body.String(), `role="alert"`) {
		t.Fatalf("refused passkey = %d %s", rec.Code, rec.Body)
	}

	req := httptest.NewRequest(http.MethodGet, "/oauth2/passkey.js", nil)
	js := httptest.NewRecorder()
	h.ServeHTTP(js, req)
	if js.Code != 200 || !strings.HasPrefix(js.Header().Get("Content-Type"), "text/javascript") || !strings.Contains(js.Body.String(), "navigator.credentials.get") {
		t.Fatalf("script = %d %q", js.Code, js.Header().Get("Content-Type"))
	}
}
