package explorer

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/gateway/internal/i18n"
	"fris.dev/pkg/errinfo"
	authv1 "fris.dev/proto/auth/v1"
)

// fakeAccountAuth is the identity provider's API as the account page uses
// it: the current password is "old horse", and a change answers new tokens.
type fakeAccountAuth struct {
	authv1.AuthServiceClient
	mu        sync.Mutex
	bearers   []string // ChangePassword's
	seen      []string // the other calls'
	signedOut int
}

func (f *fakeAccountAuth) ChangePassword(ctx context.Context, r *authv1.ChangePasswordRequest, _ ...grpc.CallOption) (*authv1.ChangePasswordResponse, error) {
	md, _ := metadata.FromOutgoingContext(ctx)
	f.mu.Lock()
	f.bearers = append(f.bearers, strings.Join(md.Get("authorization"), ","))
	f.mu.Unlock()
	switch {
	case r.GetCurrentPassword() != "old horse":
		return nil, status.Error(codes.Unauthenticated, "the current password is wrong")
	case len(r.GetNewPassword()) < 12:
		return nil, errinfo.PasswordRefusal("a password needs at least 12 characters", errinfo.PasswordTooShort, 12).Err()
	case r.GetNewPassword() == "password1234":
		return nil, errinfo.PasswordRefusal("common", errinfo.PasswordCommon, 0).Err()
	case r.GetNewPassword() == "ada@example.org":
		return nil, errinfo.PasswordRefusal("email", errinfo.PasswordIsEmail, 0).Err()
	case r.GetNewPassword() == "something else":
		return nil, status.Error(codes.InvalidArgument, "the password was changed meanwhile; sign in again")
	}
	return &authv1.ChangePasswordResponse{AccessToken: "at-after-change", RefreshToken: "rt-after-change", ExpiresIn: 3600}, nil
}

func (f *fakeAccountAuth) GetPasswordPolicy(context.Context, *authv1.GetPasswordPolicyRequest, ...grpc.CallOption) (*authv1.PasswordPolicy, error) {
	return &authv1.PasswordPolicy{MinLength: 12, RefuseCommon: true}, nil
}

func (f *fakeAccountAuth) GetUserInfo(ctx context.Context, _ *authv1.GetUserInfoRequest, _ ...grpc.CallOption) (*authv1.UserInfo, error) {
	f.saw(ctx)
	return &authv1.UserInfo{RealName: "Ada Lovelace", Email: "ada@example.org", EmailVerified: true, ContactInformation: "+49 30 1234",
		Locality: &authv1.Locality{Name: "Charité", Description: "Berlin"}}, nil
}

func (f *fakeAccountAuth) ListSessions(ctx context.Context, _ *authv1.ListSessionsRequest, _ ...grpc.CallOption) (*authv1.ListSessionsResponse, error) {
	f.saw(ctx)
	return &authv1.ListSessionsResponse{Sessions: []*authv1.AccountSession{
		{Id: "c2", ClientId: "explorer", ClientName: "FRIS Explorer", Address: "192.0.2.7", Created: uint32(t0.Add(-time.Hour).Unix()), Current: true},
		{Id: "c1", ClientId: "app", Address: "198.51.100.4", Created: uint32(t0.Add(-72 * time.Hour).Unix())},
	}}, nil
}

func (f *fakeAccountAuth) SignOutEverywhere(ctx context.Context, _ *authv1.SignOutEverywhereRequest, _ ...grpc.CallOption) (*authv1.SignOutEverywhereResponse, error) {
	f.saw(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signedOut++
	return &authv1.SignOutEverywhereResponse{}, nil
}

// saw records the bearer a call carried.
func (f *fakeAccountAuth) saw(ctx context.Context) {
	md, _ := metadata.FromOutgoingContext(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, strings.Join(md.Get("authorization"), ","))
}

func newAccountEnv(t *testing.T) (*env, *fakeAccountAuth) {
	t.Helper()
	e := &env{t: t, idp: newIdP(), v: &fakeVerifier{refused: map[string]bool{}}, mdr: &fakeMDR{}, clock: &clock{t0}}
	e.store = NewMemory(100, e.clock.now)
	fa := &fakeAccountAuth{}
	a, err := New(Config{MDR: e.mdr, Verifier: e.v, Loopback: e.idp, Store: e.store, Now: e.clock.now,
		ClientID: "explorer", ClientSecret: "s3cret-s3cret-s3cret", Auth: fa})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Register(mux)
	e.app, e.h = a, mux
	return e, fa
}

func TestAccountPage(t *testing.T) {
	e, _ := newAccountEnv(t)
	if rec := e.browser().do("GET", AccountPath, nil); rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), LoginPath) {
		t.Fatalf("anonymous: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	b := e.browser()
	b.signIn()
	if home := b.do("GET", "/explorer/", nil).Body.String(); !strings.Contains(home, `href="/explorer/account"`) {
		t.Fatal("the header does not link the account page")
	}
	rec := b.do("GET", AccountPath, nil, "Accept-Language", "de")
	body := rec.Body.String()
	for _, want := range []string{"Ihr Konto", "Passwort ändern", `action="/explorer/account/password"`, `autocomplete="current-password"`, `name="csrf_token"`, `aria-current="page"`,
		"49 30 1234", "Charité", "(bestätigt)", "FRIS Explorer", "<code>192.0.2.7</code>", "(dieser Browser)", "<code>198.51.100.4</code>", ">app<", "vor 3 Tagen",
		`action="/explorer/account/signout-everywhere"`, "Überall abmelden",
		"Mindestens 12 Zeichen. Keines der häufigsten Passwörter und nicht Ihre E-Mail-Adresse.", `minlength="12"`, `aria-describedby="pw-rule"`} {
		if rec.Code != 200 || !strings.Contains(body, want) {
			t.Fatalf("account page = %d, lacks %q:\n%s", rec.Code, want, body)
		}
	}
	for k, v := range passwordMessages {
		for _, l := range i18n.Supported {
			if strings.TrimSpace(v[l]) == "" {
				t.Errorf("%s lacks %s", k, l)
			}
		}
	}
	for k, v := range accountMessages {
		for _, l := range i18n.Supported {
			if strings.TrimSpace(v[l]) == "" {
				t.Errorf("%s lacks %s", k, l)
			}
		}
	}
}

// Changing the password: the form's CSRF token and this origin, the
// session's own token to the identity provider, and the session goes on
// with the tokens the change answered.
func TestAccountChangePassword(t *testing.T) {
	e, fa := newAccountEnv(t)
	b := e.browser()
	b.signIn()
	sess, err := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	if err != nil {
		t.Fatal(err)
	}
	before := sess.Token.AccessToken
	form := func(cur, next, again string) url.Values {
		return url.Values{CSRFField: {sess.CSRF}, "current": {cur}, "new": {next}, "new2": {again}}
	}
	for _, tc := range []struct {
		name  string
		form  url.Values
		hdr   []string
		code  int
		text  string
		calls int
	}{
		{"NoCSRF", url.Values{CSRFField: {"nope"}, "current": {"old horse"}, "new": {"a new horse battery"}, "new2": {"a new horse battery"}}, nil, 403, "", 0},
		{"OtherSite", form("old horse", "a new horse battery", "a new horse battery"), []string{"Sec-Fetch-Site", "cross-site"}, 403, "", 0},
		{"Differ", form("old horse", "a new horse battery", "another horse"), nil, 400, "The two new passwords differ.", 0},
		{"Missing", form("", "a new horse battery", "a new horse battery"), nil, 400, "Enter your current password", 0},
		{"Wrong", form("wrong horse", "a new horse battery", "a new horse battery"), nil, 400, "The current password is wrong.", 1},
		{"Policy", form("old horse", "short", "short"), nil, 400, "The new password needs at least 12 characters.", 1},
		{"Common", form("old horse", "password1234", "password1234"), nil, 400, "The new password is one of the most common ones", 1},
		{"Email", form("old horse", "ada@example.org", "ada@example.org"), nil, 400, "The new password must not be your email address", 1},
		{"Other", form("old horse", "something else", "something else"), nil, 400, "The new password was refused: the password was changed meanwhile", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fa.mu.Lock()
			n := len(fa.bearers)
			fa.mu.Unlock()
			rec := b.do("POST", PasswordPath, tc.form, tc.hdr...)
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.text) {
				t.Fatalf("= %d, want %d with %q:\n%s", rec.Code, tc.code, tc.text, rec.Body)
			}
			fa.mu.Lock()
			defer fa.mu.Unlock()
			if len(fa.bearers)-n != tc.calls {
				t.Fatalf("%d calls, want %d", len(fa.bearers)-n, tc.calls)
			}
		})
	}
	rec := b.do("POST", PasswordPath, form("old horse", "a new horse battery", "a new horse battery"))
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != AccountPath+"?done=password" {
		t.Fatalf("change = %d %q:\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	fa.mu.Lock()
	if last := fa.bearers[len(fa.bearers)-1]; last != "Bearer "+before {
		t.Fatalf("sent %q, want the session's token", last)
	}
	fa.mu.Unlock()
	after, err := e.store.Get(context.Background(), sess.ID)
	if err != nil || after.Token.AccessToken != "at-after-change" || after.Token.RefreshToken != "rt-after-change" {
		t.Fatalf("session after the change: %+v %v", after.Token, err)
	}
	// The old token is revoked now; the session goes on with the new one.
	e.v.mu.Lock()
	e.v.refused[before] = true
	e.v.mu.Unlock()
	rec = b.do("GET", AccountPath+"?done=password", nil)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "Your password has been changed") {
		t.Fatalf("after the change: %d\n%s", rec.Code, rec.Body)
	}
}

// Signing out everywhere: the form's CSRF token and this origin; the
// identity provider revokes every token, this browser's session ends.
func TestAccountSignOutEverywhere(t *testing.T) {
	e, fa := newAccountEnv(t)
	b := e.browser()
	b.signIn()
	sess, err := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	if err != nil {
		t.Fatal(err)
	}
	if rec := b.do("POST", SignOutAll, url.Values{CSRFField: {"nope"}}); rec.Code != http.StatusForbidden {
		t.Fatalf("without the CSRF token: %d", rec.Code)
	}
	if rec := b.do("POST", SignOutAll, url.Values{CSRFField: {sess.CSRF}}, "Sec-Fetch-Site", "cross-site"); rec.Code != http.StatusForbidden {
		t.Fatalf("from another site: %d", rec.Code)
	}
	fa.mu.Lock()
	if fa.signedOut != 0 {
		t.Fatal("signed out without the form's token")
	}
	fa.mu.Unlock()
	rec := b.do("POST", SignOutAll, url.Values{CSRFField: {sess.CSRF}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != Home {
		t.Fatalf("sign out everywhere = %d %q", rec.Code, rec.Header().Get("Location"))
	}
	fa.mu.Lock()
	if fa.signedOut != 1 || fa.seen[len(fa.seen)-1] != "Bearer "+sess.Token.AccessToken {
		t.Fatalf("signed out %d times, with %v", fa.signedOut, fa.seen)
	}
	fa.mu.Unlock()
	if _, err := e.store.Get(context.Background(), sess.ID); err == nil {
		t.Fatal("the session is still stored")
	}
	if _, ok := b.cookies[SessionCookie]; ok {
		t.Fatal("the session cookie is still set")
	}
}
