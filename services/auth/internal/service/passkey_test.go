package service

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/identity"
	"fris.dev/pkg/ratelimit"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
)

const rpOrigin = "https://fris.test"

// newPasskeyEnv is an env with passkeys for fris.test, the demo client and
// Ada, and an access token of hers.
func newPasskeyEnv(t *testing.T, mut ...func(*Config)) (e *env, clientID, access string) {
	t.Helper()
	e = newEnv(t, append([]func(*Config){func(c *Config) {
		c.Passkeys = PasskeyConfig{RPID: "fris.test", Origins: []string{rpOrigin}}
	}}, mut...)...)
	clientID, secret := e.seed(t)
	res, err := e.pub.Token(context.Background(), &authv1.TokenRequest{Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return e, clientID, res.GetAccessToken()
}

// addPasskey runs the registration ceremony with a, naming the passkey.
func addPasskey(t *testing.T, e *env, a *authenticator, access, name string) (*authv1.Passkey, *testCred) {
	t.Helper()
	begin, err := e.pub.BeginPasskeyRegistration(bearer(access), &authv1.BeginPasskeyRegistrationRequest{})
	if err != nil {
		t.Fatal(err)
	}
	cred, c := a.create(t, begin.GetOptions())
	res, err := e.pub.FinishPasskeyRegistration(bearer(access), &authv1.FinishPasskeyRegistrationRequest{Ceremony: begin.GetCeremony(), Name: name, Credential: cred})
	if err != nil {
		t.Fatal(err)
	}
	return res.GetPasskey(), c
}

func fromPasskeyAddr(addr string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), identity.KeyClientAddr, addr)
}

// passkeyLogin runs the sign-in ceremony with credential c.
func passkeyLogin(ctx context.Context, t *testing.T, e *env, a *authenticator, clientID string, c *testCred) (*authv1.LoginResponse, error) {
	t.Helper()
	ar := &authv1.AuthorizeRequest{ClientId: clientID, Scope: "openid", Nonce: "n-1"}
	begin, err := e.pub.BeginPasskeyLogin(ctx, &authv1.BeginPasskeyLoginRequest{Request: ar})
	if err != nil {
		return nil, err
	}
	return e.pub.FinishPasskeyLogin(ctx, &authv1.FinishPasskeyLoginRequest{Request: ar, Ceremony: begin.GetCeremony(), Credential: a.get(t, begin.GetOptions(), c)})
}

// A passkey added on the account page signs its user in: the code is the
// user's, as a password's, and the listing shows when it was last used.
func TestPasskeyAddListSignIn(t *testing.T) {
	buf := &syncBuffer{}
	e, clientID, access := newPasskeyEnv(t, func(c *Config) { c.Audit = audit.New(buf, "auth") })
	ctx := context.Background()
	a := newAuthenticator(rpOrigin)
	pk, c := addPasskey(t, e, a, access, "  Laptop  ")
	if pk.GetName() != "Laptop" || pk.GetId() == "" || pk.GetCreated() == 0 || pk.GetLastUsed() != 0 {
		t.Fatalf("added %+v", pk)
	}

	res, err := passkeyLogin(ctx, t, e, a, clientID, c)
	if err != nil {
		t.Fatal(err)
	}
	if res.GetCode() == "" || res.GetRedirectUri() != "https://app.example/cb" {
		t.Fatalf("login = %+v", res)
	}
	g, err := e.store.PeekGrant(ctx, res.GetCode())
	if err != nil || fmt.Sprint(g.UserID) != e.uid(t, "ada@example.org") || g.Nonce != "n-1" {
		t.Fatalf("grant %+v, %v", g, err)
	}
	list, err := e.pub.ListPasskeys(bearer(access), &authv1.ListPasskeysRequest{})
	if err != nil || len(list.GetPasskeys()) != 1 || list.GetPasskeys()[0].GetLastUsed() == 0 {
		t.Fatalf("list = %+v, %v", list, err)
	}
	// The operators' users list says ada holds a passkey.
	if !listedUser(t, e, "ada@example.org").GetHasPasskey() {
		t.Fatal("the users list does not show the passkey")
	}
	// The operators' users view sees it as a passkey's sign-in.
	si, err := e.store.UserSignIns(ctx, g.UserID)
	if err != nil || !slices.ContainsFunc(si.Recent, func(ev storage.SignInEvent) bool { return ev.Method == storage.MethodPasskey && ev.Client == clientID }) {
		t.Fatalf("sign-ins = %+v, %v", si, err)
	}

	// Removed, it signs no one in; unproven (ada's address is not
	// verified), its removal ended every session.
	if rm, err := e.pub.RemovePasskey(bearer(access), &authv1.RemovePasskeyRequest{Id: pk.GetId()}); err != nil || !rm.GetSignedOut() {
		t.Fatalf("remove = %v %v", rm, err)
	}
	_, err = passkeyLogin(ctx, t, e, a, clientID, c)
	wantCode(t, err, codes.Unauthenticated)
	if listedUser(t, e, "ada@example.org").GetHasPasskey() {
		t.Fatal("the users list shows a removed passkey")
	}
	// Ada's address is unverified, so the passkey was unproven: its
	// removal ended every session, this one's too.
	_, err = e.pub.RemovePasskey(bearer(access), &authv1.RemovePasskeyRequest{Id: pk.GetId()})
	wantCode(t, err, codes.PermissionDenied)

	ada := e.uid(t, "ada@example.org")
	var seen []string
	for _, ev := range buf.events(t) {
		switch ev["action"] {
		case "auth.passkey_add", "auth.passkey_login", "auth.passkey_remove":
			seen = append(seen, fmt.Sprint(ev["action"], " ", ev["actor"], " ", ev["outcome"]))
		}
	}
	want := []string{"auth.passkey_add " + ada + " success", "auth.passkey_login " + ada + " success", "auth.passkey_remove " + ada + " success",
		"auth.passkey_login anonymous failure"} // the refused token's removal names no account
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit events:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}

// A disabled user's passkey signs no one in; enabled again, it does.
func TestPasskeyDisabledUser(t *testing.T) {
	e, clientID, access := newPasskeyEnv(t)
	ctx := context.Background()
	a := newAuthenticator(rpOrigin)
	_, c := addPasskey(t, e, a, access, "Phone")
	if _, err := e.adm.SetUserDisabled(ctx, &authv1.SetUserDisabledRequest{Email: "ada@example.org", Disabled: true}); err != nil {
		t.Fatal(err)
	}
	_, err := passkeyLogin(ctx, t, e, a, clientID, c)
	wantCode(t, err, codes.Unauthenticated)
	if _, err := e.adm.SetUserDisabled(ctx, &authv1.SetUserDisabledRequest{Email: "ada@example.org", Disabled: false}); err != nil {
		t.Fatal(err)
	}
	if _, err := passkeyLogin(ctx, t, e, a, clientID, c); err != nil {
		t.Fatal(err)
	}
}

// A ceremony is answered once; one of the other kind, or of another page
// (origin), is refused; a signature counter that goes back is refused as a
// cloned key.
func TestPasskeyCeremonyChecks(t *testing.T) {
	e, clientID, access := newPasskeyEnv(t)
	ctx := context.Background()
	a := newAuthenticator(rpOrigin)
	_, c := addPasskey(t, e, a, access, "Key")
	ar := &authv1.AuthorizeRequest{ClientId: clientID}

	begin, err := e.pub.BeginPasskeyLogin(ctx, &authv1.BeginPasskeyLoginRequest{Request: ar})
	if err != nil {
		t.Fatal(err)
	}
	answer := a.get(t, begin.GetOptions(), c)
	if _, err := e.pub.FinishPasskeyLogin(ctx, &authv1.FinishPasskeyLoginRequest{Request: ar, Ceremony: begin.GetCeremony(), Credential: answer}); err != nil {
		t.Fatal(err)
	}
	_, err = e.pub.FinishPasskeyLogin(ctx, &authv1.FinishPasskeyLoginRequest{Request: ar, Ceremony: begin.GetCeremony(), Credential: answer})
	wantCode(t, err, codes.InvalidArgument) // used

	// A registration's ceremony does not sign in.
	reg, err := e.pub.BeginPasskeyRegistration(bearer(access), &authv1.BeginPasskeyRegistrationRequest{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.pub.FinishPasskeyLogin(ctx, &authv1.FinishPasskeyLoginRequest{Request: ar, Ceremony: reg.GetCeremony(), Credential: answer})
	wantCode(t, err, codes.InvalidArgument)

	// A phishing page's origin.
	phish := newAuthenticator("https://fris-login.example")
	phish.creds = a.creds
	_, err = passkeyLogin(ctx, t, e, phish, clientID, c)
	wantCode(t, err, codes.Unauthenticated)

	// The counter went back: two copies of the key.
	c.count = 0
	_, err = passkeyLogin(ctx, t, e, a, clientID, c)
	wantCode(t, err, codes.Unauthenticated)

	// Garbage, and an overlong answer.
	begin, err = e.pub.BeginPasskeyLogin(ctx, &authv1.BeginPasskeyLoginRequest{Request: ar})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.pub.FinishPasskeyLogin(ctx, &authv1.FinishPasskeyLoginRequest{Request: ar, Ceremony: begin.GetCeremony(), Credential: "{not json"})
	wantCode(t, err, codes.Unauthenticated)
	_, err = e.pub.FinishPasskeyLogin(ctx, &authv1.FinishPasskeyLoginRequest{Request: ar, Ceremony: "x", Credential: strings.Repeat("a", MaxCredentialJSON+1)})
	wantCode(t, err, codes.InvalidArgument)
	// An unknown client is refused before any ceremony.
	_, err = e.pub.BeginPasskeyLogin(ctx, &authv1.BeginPasskeyLoginRequest{Request: &authv1.AuthorizeRequest{ClientId: "nosuch"}})
	wantCode(t, err, codes.NotFound)
}

// At most MaxPasskeys; names are bounded; the calls need a user's token.
func TestPasskeyLimits(t *testing.T) {
	e, _, access := newPasskeyEnv(t)
	a := newAuthenticator(rpOrigin)
	for i := range MaxPasskeys {
		addPasskey(t, e, a, access, fmt.Sprint("key ", i))
	}
	_, err := e.pub.BeginPasskeyRegistration(bearer(access), &authv1.BeginPasskeyRegistrationRequest{})
	wantCode(t, err, codes.InvalidArgument)
	list, err := e.pub.ListPasskeys(bearer(access), &authv1.ListPasskeysRequest{})
	if err != nil || len(list.GetPasskeys()) != MaxPasskeys {
		t.Fatalf("list = %d, %v", len(list.GetPasskeys()), err)
	}

	e2, _, access2 := newPasskeyEnv(t)
	for _, name := range []string{"", "   ", strings.Repeat("x", MaxPasskeyName+1), "tab\there"} {
		begin, err := e2.pub.BeginPasskeyRegistration(bearer(access2), &authv1.BeginPasskeyRegistrationRequest{})
		if err != nil {
			t.Fatal(err)
		}
		cred, _ := a.create(t, begin.GetOptions())
		_, err = e2.pub.FinishPasskeyRegistration(bearer(access2), &authv1.FinishPasskeyRegistrationRequest{Ceremony: begin.GetCeremony(), Name: name, Credential: cred})
		wantCode(t, err, codes.InvalidArgument)
	}
	_, err = e2.pub.ListPasskeys(context.Background(), &authv1.ListPasskeysRequest{})
	wantCode(t, err, codes.PermissionDenied)
	_, err = e2.pub.BeginPasskeyRegistration(context.Background(), &authv1.BeginPasskeyRegistrationRequest{})
	wantCode(t, err, codes.PermissionDenied)
}

// Failed passkey sign-ins are limited per client address; another address,
// the holder's, is not held back.
func TestPasskeyFailuresLimitedPerAddress(t *testing.T) {
	e, clientID, access := newPasskeyEnv(t, func(c *Config) {
		c.Guards.Passkey = ratelimit.New(nil, nil, nil).Guard("passkey", ratelimit.Policy{}, ratelimit.Policy{Limit: ratelimit.Limit{Events: 2, Per: time.Hour, Burst: 2}})
	})
	a := newAuthenticator(rpOrigin)
	_, c := addPasskey(t, e, a, access, "Key")
	stranger := newAuthenticator(rpOrigin)
	_, fake := stranger.create(t, `{"publicKey":{"challenge":"AAAA","rp":{"id":"fris.test"},"user":{"id":"`+b64.EncodeToString(c.handle)+`"}}}`)
	bad := fromPasskeyAddr("198.51.100.9")
	for _, want := range []codes.Code{codes.Unauthenticated, codes.Unauthenticated, codes.ResourceExhausted} {
		_, err := passkeyLogin(bad, t, e, stranger, clientID, fake)
		wantCode(t, err, want)
	}
	if _, err := passkeyLogin(fromPasskeyAddr("198.51.100.10"), t, e, a, clientID, c); err != nil {
		t.Fatalf("the holder's address: %v", err)
	}
}

// Without a relying party the calls say passkeys are off.
func TestPasskeysOff(t *testing.T) {
	e := newEnv(t)
	_, err := e.pub.BeginPasskeyLogin(context.Background(), &authv1.BeginPasskeyLoginRequest{})
	wantCode(t, err, codes.Unimplemented)
}

func TestUserHandle(t *testing.T) {
	for _, id := range []int32{1, 33, 2147483647} {
		if got, ok := handleUser(userHandle(id)); !ok || got != id {
			t.Errorf("handle of %d read back as %d %v", id, got, ok)
		}
	}
	for _, h := range []string{"", "fris-user:", "fris-user:0", "fris-user:-1", "fris-user:007", "fris-user:99999999999", "other:1"} {
		if _, ok := handleUser([]byte(h)); ok {
			t.Errorf("%q accepted", h)
		}
	}
}

func TestPasskeyDefaults(t *testing.T) {
	got := PasskeyDefaults("https://fris.example.org:8443")
	if got.RPID != "fris.example.org" || len(got.Origins) != 1 || got.Origins[0] != "https://fris.example.org:8443" {
		t.Fatalf("defaults = %+v", got)
	}
}

// A passkey sign-in's tokens are ordinary ones: signing out everywhere
// ends them, and the user's scopes (roles) are in them.
func TestPasskeySessionEndsWithSignOutEverywhere(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Passkeys = PasskeyConfig{RPID: "fris.test", Origins: []string{rpOrigin}} })
	clientID, secret := e.seed(t)
	ctx := context.Background()
	first, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	a := newAuthenticator(rpOrigin)
	_, c := addPasskey(t, e, a, first.GetAccessToken(), "Key")
	res, err := passkeyLogin(ctx, t, e, a, clientID, c)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: res.GetCode(), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	if scopes := fmt.Sprint(claims(t, tok.GetAccessToken()).PrivateClaims()["scope"]); !strings.Contains(scopes, "mdr:secret") {
		t.Fatalf("the passkey's token has scopes %s", scopes)
	}
	if _, err := e.pub.GetUserInfo(bearer(tok.GetAccessToken()), &authv1.GetUserInfoRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pub.SignOutEverywhere(bearer(first.GetAccessToken()), &authv1.SignOutEverywhereRequest{}); err != nil {
		t.Fatal(err)
	}
	_, err = e.pub.GetUserInfo(bearer(tok.GetAccessToken()), &authv1.GetUserInfoRequest{})
	wantCode(t, err, codes.PermissionDenied)
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: tok.GetRefreshToken()})
	if err == nil {
		t.Fatal("the passkey session's refresh token still works")
	}
}
