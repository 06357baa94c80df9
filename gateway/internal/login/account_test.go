package login

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/errinfo"
	"fris.dev/pkg/identity"
	"fris.dev/pkg/rpcerr"
	authv1 "fris.dev/proto/auth/v1"
)

// accountAuth is the auth service as the self-service pages use it: one
// live reset token "good-token" of ada@example.org, spent on use.
type accountAuth struct {
	fakeAuth
	mu       sync.Mutex
	requests []*authv1.RequestPasswordResetRequest
	prefixes []string
	resets   []*authv1.ResetPasswordRequest
	spent    bool
	throttle bool
}

func (f *accountAuth) RequestPasswordReset(ctx context.Context, in *authv1.RequestPasswordResetRequest, _ ...grpc.CallOption) (*authv1.RequestPasswordResetResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	md, _ := metadata.FromOutgoingContext(ctx)
	f.requests = append(f.requests, in)
	f.prefixes = append(f.prefixes, strings.Join(md.Get(identity.KeyAuthPrefix), ","))
	if f.throttle {
		return nil, rpcerr.Throttled(90 * time.Second)
	}
	if !strings.Contains(in.GetEmail(), "@") {
		return nil, status.Error(codes.InvalidArgument, "email is not a valid address")
	}
	return &authv1.RequestPasswordResetResponse{}, nil // known or not: the same
}

func (f *accountAuth) live(tok string) bool { return tok == "good-token" && !f.spent }

// purposeOf: "verify-token" is the one live verification token.
func purposeOf(tok string) authv1.AccountTokenPurpose {
	if tok == "verify-token" {
		return authv1.AccountTokenPurpose_ACCOUNT_TOKEN_PURPOSE_EMAIL_VERIFICATION
	}
	return authv1.AccountTokenPurpose_ACCOUNT_TOKEN_PURPOSE_PASSWORD_RESET
}

func (f *accountAuth) VerifyEmail(_ context.Context, in *authv1.VerifyEmailRequest, _ ...grpc.CallOption) (*authv1.VerifyEmailResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if in.GetToken() != "verify-token" || f.spent {
		return nil, status.Error(codes.NotFound, "this link has expired or has been used already")
	}
	f.spent = true
	return &authv1.VerifyEmailResponse{Email: "ada@example.org", Removed: []*authv1.Credential{
		{Kind: "key", Id: "7", Description: "<b>stranger</b>", Created: 1700000000, AddedBy: "registration"},
		{Kind: "passkey", Id: "cred-1", AddedBy: "holder"},
	}}, nil
}

func (f *accountAuth) CheckAccountToken(_ context.Context, in *authv1.CheckAccountTokenRequest, _ ...grpc.CallOption) (*authv1.CheckAccountTokenResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	tok := in.GetToken()
	if (tok != "verify-token" && !f.live(tok)) || (tok == "verify-token" && f.spent) || in.GetPurpose() != purposeOf(tok) {
		return nil, status.Error(codes.NotFound, "this link has expired or has been used already")
	}
	return &authv1.CheckAccountTokenResponse{Email: "ada@example.org"}, nil
}

func (f *accountAuth) ResetPassword(_ context.Context, in *authv1.ResetPasswordRequest, _ ...grpc.CallOption) (*authv1.ResetPasswordResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resets = append(f.resets, in)
	switch pw := in.GetPassword(); {
	case len(pw) < 12:
		return nil, errinfo.PasswordRefusal("a password needs at least 12 characters", errinfo.PasswordTooShort, 12).Err()
	case pw == "password1234":
		return nil, errinfo.PasswordRefusal("common", errinfo.PasswordCommon, 0).Err()
	case strings.EqualFold(pw, "ada@example.org"):
		return nil, errinfo.PasswordRefusal("email", errinfo.PasswordIsEmail, 0).Err()
	}
	if !f.live(in.GetToken()) {
		return nil, status.Error(codes.NotFound, "this link has expired or has been used already")
	}
	f.spent = true
	return &authv1.ResetPasswordResponse{Email: "ada@example.org"}, nil
}

func (f *accountAuth) GetPasswordPolicy(context.Context, *authv1.GetPasswordPolicyRequest, ...grpc.CallOption) (*authv1.PasswordPolicy, error) {
	return &authv1.PasswordPolicy{MinLength: 12, RefuseCommon: true}, nil
}

func serve(h http.Handler, method, target string, form url.Values, headers ...string) *httptest.ResponseRecorder {
	var req *http.Request
	if form != nil {
		req = httptest.NewRequest(method, target, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequest(method, target, nil)
	}
	req.AddCookie(&http.Cookie{Name: CSRFCookie, Value: goodCSRF})
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

var nonces = regexp.MustCompile(`nonce="[^"]*"`)

func TestForgotPage(t *testing.T) {
	f := &accountAuth{}
	h := New(Config{Client: f, Prefix: "/oauth2", MaxForm: 4096})

	// The login page links to it, with the authorize request.
	rec := serve(h, "GET", "/oauth2/authorize?client_id=c1&state=s1", nil)
	if !strings.Contains(rec.Body.String(), `href="/oauth2/forgot?client_id=c1&amp;state=s1"`) {
		t.Fatalf("login page lacks the forgot link:\n%s", rec.Body)
	}
	rec = serve(h, "GET", "/oauth2/forgot?client_id=c1&state=s1", nil, "Accept-Language", "de")
	body := rec.Body.String()
	for _, want := range []string{`action="/oauth2/forgot"`, `name="client_id" value="c1"`, `name="csrf_token" value="` + goodCSRF + `"`,
		"Passwort vergessen?", `href="/oauth2/authorize?client_id=c1&amp;state=s1"`, `autocomplete="username"`} {
		if rec.Code != 200 || !strings.Contains(body, want) {
			t.Fatalf("GET forgot = %d, lacks %q:\n%s", rec.Code, want, body)
		}
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self';") || rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("headers %v", rec.Header())
	}

	// Known and unknown addresses get the same page.
	form := func(email string) url.Values {
		return url.Values{"email": {email}, CSRFField: {goodCSRF}, "client_id": {"c1"}}
	}
	known := serve(h, "POST", "/oauth2/forgot", form("ada@example.org"), "Accept-Language", "de")
	unknown := serve(h, "POST", "/oauth2/forgot", form("nobody@example.org"), "Accept-Language", "de")
	if known.Code != 200 || unknown.Code != 200 || nonces.ReplaceAllString(known.Body.String(), "") != nonces.ReplaceAllString(unknown.Body.String(), "") ||
		!strings.Contains(known.Body.String(), "Hat ein Konto diese Adresse") {
		t.Fatalf("known %d, unknown %d:\n%s\n---\n%s", known.Code, unknown.Code, known.Body, unknown.Body)
	}
	f.mu.Lock()
	if len(f.requests) != 2 || f.requests[0].GetLang() != "de" || f.prefixes[0] != "/oauth2" {
		t.Fatalf("requests %v, prefixes %v", f.requests, f.prefixes)
	}
	f.mu.Unlock()

	for _, tc := range []struct {
		name    string
		form    url.Values
		headers []string
		code    int
		text    string
	}{
		{"NoCSRF", url.Values{"email": {"ada@example.org"}, CSRFField: {strings.Repeat("B", 43)}}, nil, 400, "expired"},
		{"OtherSite", form("ada@example.org"), []string{"Sec-Fetch-Site", "cross-site"}, 403, "another site"},
		{"NoEmail", form(" "), nil, 400, MissingEmail},
		{"BadEmail", form("ada"), nil, 400, InvalidEmail},
		{"Twice", url.Values{"email": {"a@b.example", "c@d.example"}, CSRFField: {goodCSRF}}, nil, 400, "more than once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.mu.Lock()
			before := len(f.requests)
			f.mu.Unlock()
			rec := serve(h, "POST", "/oauth2/forgot", tc.form, tc.headers...)
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.text) {
				t.Fatalf("= %d, want %d with %q:\n%s", rec.Code, tc.code, tc.text, rec.Body)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if called := len(f.requests) - before; tc.name != "BadEmail" && called != 0 {
				t.Fatalf("%d calls to the auth service", called)
			}
		})
	}
	f.mu.Lock()
	f.throttle = true
	f.mu.Unlock()
	rec = serve(h, "POST", "/oauth2/forgot", form("ada@example.org"))
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "90" {
		t.Fatalf("throttled = %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
}

func TestResetPage(t *testing.T) {
	f := &accountAuth{}
	h := New(Config{Client: f, Prefix: "/oauth2", MaxForm: 4096})
	rec := serve(h, "GET", "/oauth2/reset?token=good-token", nil)
	body := rec.Body.String()
	for _, want := range []string{`action="/oauth2/reset"`, `name="token" value="good-token"`, "ada@example.org", `autocomplete="new-password"`, `name="csrf_token"`,
		`minlength="12"`, "At least 12 characters. Not one of the most common passwords, and not your email address.", `aria-describedby="password-rule"`} {
		if rec.Code != 200 || !strings.Contains(body, want) {
			t.Fatalf("GET reset = %d, lacks %q:\n%s", rec.Code, want, body)
		}
	}
	for _, target := range []string{"/oauth2/reset?token=bad", "/oauth2/reset"} {
		rec = serve(h, "GET", target, nil, "Accept-Language", "de")
		if rec.Code != 404 || !strings.Contains(rec.Body.String(), "abgelaufen") || !strings.Contains(rec.Body.String(), `href="/oauth2/forgot"`) {
			t.Fatalf("GET %s = %d:\n%s", target, rec.Code, rec.Body)
		}
	}
	post := func(tok, pw, again string) *httptest.ResponseRecorder {
		return serve(h, "POST", "/oauth2/reset", url.Values{"token": {tok}, "password": {pw}, "password2": {again}, CSRFField: {goodCSRF}})
	}
	for _, tc := range []struct {
		name, pw, again string
		code            int
		text            string
		calls           int
	}{
		{"Differ", "long enough 1", "long enough 2", 400, PasswordsDiffer, 0},
		{"Missing", "", "", 400, MissingPasswords, 0},
		{"Policy", "short", "short", 400, "A password needs at least 12 characters.", 1},
		{"Common", "password1234", "password1234", 400, CommonPassword, 1},
		{"Email", "ADA@example.org", "ADA@example.org", 400, EmailPassword, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.mu.Lock()
			before := len(f.resets)
			f.mu.Unlock()
			rec := post("good-token", tc.pw, tc.again)
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.text) || !strings.Contains(rec.Body.String(), `name="token" value="good-token"`) {
				t.Fatalf("= %d, want %d with %q and the form again:\n%s", rec.Code, tc.code, tc.text, rec.Body)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(f.resets)-before != tc.calls {
				t.Fatalf("%d resets, want %d", len(f.resets)-before, tc.calls)
			}
		})
	}
	// In German, the rule and a refusal are the page's own words.
	rec = serve(h, "POST", "/oauth2/reset", url.Values{"token": {"good-token"}, "password": {"kurz"}, "password2": {"kurz"}, CSRFField: {goodCSRF}}, "Accept-Language", "de")
	for _, want := range []string{"Ein Passwort braucht mindestens 12 Zeichen.", "Mindestens 12 Zeichen. Keines der häufigsten Passwörter"} {
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), want) {
			t.Fatalf("German refusal = %d, lacks %q:\n%s", rec.Code, want, rec.Body)
		}
	}
	rec = serve(h, "POST", "/oauth2/reset", url.Values{"token": {"good-token"}, "password": {"a new horse battery"}, "password2": {"a new horse battery"}, CSRFField: {"nope"}})
	if rec.Code != 400 || f.spent {
		t.Fatalf("without the CSRF token: %d, spent %v", rec.Code, f.spent)
	}
	rec = post("good-token", "a new horse battery", "a new horse battery")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), PasswordSet) || !strings.Contains(rec.Header().Get("Set-Cookie"), CSRFCookie+"=;") {
		t.Fatalf("reset = %d, cookies %q:\n%s", rec.Code, rec.Header().Values("Set-Cookie"), rec.Body)
	}
	rec = post("good-token", "a new horse battery", "a new horse battery")
	if rec.Code != 404 || !strings.Contains(rec.Body.String(), DeadLink) {
		t.Fatalf("spent link = %d:\n%s", rec.Code, rec.Body)
	}
	if m := messages.Missing(); len(m) > 0 {
		t.Errorf("texts missing: %v", m)
	}
}

// The verification link's GET only shows a button (mail scanners follow
// links); the POST, with the page's CSRF token, confirms once.
func TestVerifyPage(t *testing.T) {
	f := &accountAuth{}
	h := New(Config{Client: f, Prefix: "/oauth2", MaxForm: 4096})
	rec := serve(h, "GET", "/oauth2/verify?token=verify-token", nil, "Accept-Language", "de")
	body := rec.Body.String()
	for _, want := range []string{"E-Mail-Adresse bestätigen", "ada@example.org", `action="/oauth2/verify"`, `name="token" value="verify-token"`, `name="csrf_token"`} {
		if rec.Code != 200 || !strings.Contains(body, want) {
			t.Fatalf("GET verify = %d, lacks %q:\n%s", rec.Code, want, body)
		}
	}
	if f.spent {
		t.Fatal("showing the page confirmed the address")
	}
	// A reset token is no verification token.
	if rec := serve(h, "GET", "/oauth2/verify?token=good-token", nil); rec.Code != 404 {
		t.Fatalf("a reset token on the verify page = %d", rec.Code)
	}
	if rec := serve(h, "POST", "/oauth2/verify", url.Values{"token": {"verify-token"}, CSRFField: {"nope"}}); rec.Code != 400 || f.spent {
		t.Fatalf("without the CSRF token = %d, spent %v", rec.Code, f.spent)
	}
	rec = serve(h, "POST", "/oauth2/verify", url.Values{"token": {"verify-token"}, CSRFField: {goodCSRF}})
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), EmailVerified) {
		t.Fatalf("POST verify = %d:\n%s", rec.Code, rec.Body)
	}
	// What the owner's proof removed is named, escaped.
	for _, want := range []string{CredentialsRemoved, `<li data-kind="key" data-id="7">Key 7 „&lt;b&gt;stranger&lt;/b&gt;“, added 2023-11-14 22:13 UTC (registered without sign-in)</li>`,
		`<li data-kind="passkey" data-id="cred-1">Passkey cred-1 (added by the signed-in holder)</li>`} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Fatalf("POST verify lacks %q:\n%s", want, rec.Body)
		}
	}
	rec = serve(h, "POST", "/oauth2/verify", url.Values{"token": {"verify-token"}, CSRFField: {goodCSRF}})
	if rec.Code != 404 || !strings.Contains(rec.Body.String(), DeadLink) {
		t.Fatalf("the spent link = %d:\n%s", rec.Code, rec.Body)
	}
	if m := messages.Missing(); len(m) > 0 {
		t.Errorf("texts missing: %v", m)
	}
}
