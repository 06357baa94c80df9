package service

import (
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"testing"

	"google.golang.org/grpc/codes"

	"fris.dev/pkg/audit"
	authv1 "fris.dev/proto/auth/v1"
)

// credentialsOf lists a user's credentials through the admin API.
func (e *env) credentials(t *testing.T, email string) []*authv1.Credential {
	t.Helper()
	res, err := e.adm.ListUserCredentials(context.Background(), &authv1.ListUserCredentialsRequest{Email: email})
	if err != nil {
		t.Fatal(err)
	}
	return res.GetCredentials()
}

func unprovenFlag(t *testing.T, e *env, email string) bool {
	t.Helper()
	return listedUser(t, e, email).GetUnprovenCredentials()
}

// listedUser is email's record in the admin API's users list.
func listedUser(t *testing.T, e *env, email string) *authv1.UserRecord {
	t.Helper()
	res, err := e.adm.ListUsers(context.Background(), &authv1.ListUsersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range res.GetUsers() {
		if u.GetEmail() == email {
			return u
		}
	}
	t.Fatalf("%s not listed", email)
	return nil
}

// The attack: a stranger registers the victim's address with the
// stranger's key; the owner claims the account with a reset link. The
// stranger's key is removed (by id and by hash), its tokens revoked, the
// owner told, the removal audited with the owner as actor; an operator's
// grant before asks to be confirmed.
func TestResetRevokesAStrangersKey(t *testing.T) {
	buf := &syncBuffer{}
	e, box := newAccountEnv(t, func(c *Config) { c.Audit = audit.New(buf, "auth") })
	ctx := context.Background()
	const victim = "victim@example.org"
	k := userKey()
	reg := register(t, e, victim, k)
	sr, err := e.pub.SignRequest(ctx, &authv1.SignRequestRequest{KeyId: reg.GetKeyId()})
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: sr.GetCode(), Signature: sign(t, k, sr.GetCode())})
	if err != nil {
		t.Fatal(err)
	}
	cs := e.credentials(t, victim)
	if len(cs) != 1 || cs[0].GetKind() != "key" || cs[0].GetId() != strconv.Itoa(int(reg.GetKeyId())) || cs[0].GetAddedBy() != "registration" ||
		cs[0].GetProven() || cs[0].GetLastUsed() == 0 || cs[0].GetDescription() != "key" {
		t.Fatalf("credentials before = %v", cs)
	}
	if !unprovenFlag(t, e, victim) {
		t.Fatal("the users list does not mark the unproven key")
	}
	// A grant to such an account asks for confirmation; removing scopes
	// does not.
	_, err = e.adm.SetUserScopes(ctx, &authv1.SetUserScopesRequest{Email: victim, Scopes: []string{"broker:researcher"}})
	wantCode(t, err, codes.FailedPrecondition)
	if _, err := e.adm.SetUserScopes(ctx, &authv1.SetUserScopesRequest{Email: victim}); err != nil {
		t.Fatal(err)
	}

	// The owner claims the address.
	if err := requestReset(e, ctx, victim); err != nil {
		t.Fatal(err)
	}
	mails := box.resets()
	if len(mails) != 1 {
		t.Fatalf("%d reset mails", len(mails))
	}
	res, err := e.pub.ResetPassword(ctx, &authv1.ResetPasswordRequest{Token: tokenOf(t, mails[0], "/oauth2/reset"), Password: "the owner's own"})
	if err != nil {
		t.Fatal(err)
	}
	if rm := res.GetRemoved(); len(rm) != 1 || rm[0].GetKind() != "key" || rm[0].GetId() != strconv.Itoa(int(reg.GetKeyId())) {
		t.Fatalf("removed = %v", rm)
	}
	_, err = e.pub.SignRequest(ctx, &authv1.SignRequestRequest{KeyId: reg.GetKeyId()})
	wantCode(t, err, codes.NotFound)
	sum := sha512.Sum512(spki(t, k))
	_, err = e.pub.SignRequest(ctx, &authv1.SignRequestRequest{Sha512Hash: hex.EncodeToString(sum[:])})
	wantCode(t, err, codes.NotFound)
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{Code: sr.GetCode(), Signature: sign(t, k, sr.GetCode())})
	wantCode(t, err, codes.NotFound)
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: stranger.GetRefreshToken()})
	if err == nil {
		t.Fatal("the stranger's refresh token still works")
	}
	_, err = e.pub.GetUserInfo(bearer(stranger.GetAccessToken()), &authv1.GetUserInfoRequest{})
	wantCode(t, err, codes.PermissionDenied)

	cs = e.credentials(t, victim)
	if len(cs) != 1 || cs[0].GetKind() != "password" || cs[0].GetAddedBy() != "reset" || !cs[0].GetProven() || cs[0].GetCreated() == 0 {
		t.Fatalf("credentials after = %v", cs)
	}
	// The account keeps what was removed, for its page.
	listed, err := e.adm.ListUserCredentials(ctx, &authv1.ListUserCredentialsRequest{Email: victim})
	if err != nil {
		t.Fatal(err)
	}
	if rm := listed.GetRemoved(); len(rm) != 1 || rm[0].GetKind() != "key" || rm[0].GetRemoved() == 0 || rm[0].GetDescription() != "key" {
		t.Fatalf("removed listed = %v", rm)
	}
	if unprovenFlag(t, e, victim) {
		t.Fatal("still marked unproven")
	}
	// Now proven and verified: a grant needs no confirmation.
	if _, err := e.adm.SetUserScopes(ctx, &authv1.SetUserScopesRequest{Email: victim, Scopes: []string{"broker:researcher"}}); err != nil {
		t.Fatal(err)
	}
	// The address has a verified owner: registering it again is refused;
	// the freed key may serve another address.
	_, err = e.pub.Register(ctx, &authv1.RegisterRequest{Email: victim, Base64EncodedPublicKey: base64.StdEncoding.EncodeToString(spki(t, k))})
	wantCode(t, err, codes.AlreadyExists)
	register(t, e, "stranger@example.org", k)

	uid := e.uid(t, victim)
	found := false
	for _, ev := range buf.events(t) {
		if ev["action"] == "auth.credential_revoke" {
			found = true
			if ev["actor"] != uid || ev["target"] != uid || ev["outcome"] != audit.Success || ev["kind"] != "key" || ev["id"] != strconv.Itoa(int(reg.GetKeyId())) {
				t.Errorf("revoke event = %v", ev)
			}
		}
	}
	if !found {
		t.Fatalf("no auth.credential_revoke event:\n%s", buf.String())
	}
}

// The verification link proves the address too: the unproven key goes,
// and with it every token issued so far.
func TestVerificationRevokesUnprovenKeys(t *testing.T) {
	e, box := newAccountEnv(t)
	ctx := context.Background()
	res, _ := signInByKey(t, e, "self@example.org")
	u, err := e.store.GetUserByEmail(ctx, "self@example.org")
	if err != nil {
		t.Fatal(err)
	}
	e.svc.sendVerification(ctx, u)
	mails := box.all()
	if len(mails) != 1 {
		t.Fatalf("%d mails", len(mails))
	}
	v, err := e.pub.VerifyEmail(ctx, &authv1.VerifyEmailRequest{Token: tokenOf(t, mails[0], "/oauth2/verify")})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.GetRemoved()) != 1 || v.GetRemoved()[0].GetKind() != "key" {
		t.Fatalf("removed = %v", v.GetRemoved())
	}
	if cs := e.credentials(t, "self@example.org"); len(cs) != 0 {
		t.Fatalf("credentials after = %v", cs)
	}
	_, err = e.pub.GetUserInfo(bearer(res.GetAccessToken()), &authv1.GetUserInfoRequest{})
	wantCode(t, err, codes.PermissionDenied)
}

// The holder lists and removes; the password cannot be removed, nor the
// only way in of an account without one. An operator removes any key,
// and that ends the user's tokens.
func TestRemoveCredentials(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clientID, secret := e.seed(t)
	tok, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	mine, err := e.pub.ListCredentials(bearer(tok.GetAccessToken()), &authv1.ListCredentialsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if cs := mine.GetCredentials(); len(cs) != 1 || cs[0].GetKind() != "password" || cs[0].GetAddedBy() != "operator" || cs[0].GetLastUsed() == 0 {
		t.Fatalf("ada's credentials = %v", cs)
	}
	_, err = e.pub.RemoveCredential(bearer(tok.GetAccessToken()), &authv1.RemoveCredentialRequest{Kind: "password"})
	wantCode(t, err, codes.InvalidArgument)
	_, err = e.pub.ListCredentials(ctx, &authv1.ListCredentialsRequest{})
	wantCode(t, err, codes.PermissionDenied)

	res, _ := signInByKey(t, e, "self@example.org")
	keyID := e.credentials(t, "self@example.org")[0].GetId()
	_, err = e.pub.RemoveCredential(bearer(res.GetAccessToken()), &authv1.RemoveCredentialRequest{Kind: "key", Id: keyID})
	wantCode(t, err, codes.FailedPrecondition) // its only way in
	// Another user's key is not the holder's to remove.
	_, err = e.pub.RemoveCredential(bearer(tok.GetAccessToken()), &authv1.RemoveCredentialRequest{Kind: "key", Id: keyID})
	wantCode(t, err, codes.NotFound)
	_, err = e.adm.RemoveUserCredential(ctx, &authv1.RemoveUserCredentialRequest{Email: "ada@example.org", Kind: "key", Id: keyID})
	wantCode(t, err, codes.NotFound)

	if _, err := e.adm.RemoveUserCredential(ctx, &authv1.RemoveUserCredentialRequest{Email: "self@example.org", Kind: "key", Id: keyID}); err != nil {
		t.Fatal(err)
	}
	if cs := e.credentials(t, "self@example.org"); len(cs) != 0 {
		t.Fatalf("after removal: %v", cs)
	}
	_, err = e.pub.GetUserInfo(bearer(res.GetAccessToken()), &authv1.GetUserInfoRequest{})
	wantCode(t, err, codes.PermissionDenied)
	_, err = e.adm.RemoveUserCredential(ctx, &authv1.RemoveUserCredentialRequest{Email: "self@example.org", Kind: "key", Id: keyID})
	wantCode(t, err, codes.NotFound)
	_, err = e.adm.RemoveUserCredential(ctx, &authv1.RemoveUserCredentialRequest{Email: "nobody@example.org", Kind: "key", Id: "1"})
	wantCode(t, err, codes.NotFound)
	_, err = e.adm.RemoveUserCredential(ctx, &authv1.RemoveUserCredentialRequest{Email: "self@example.org", Kind: "bogus", Id: "1"})
	wantCode(t, err, codes.InvalidArgument)
}

// The holder of an account with a password removes its unproven key: the
// answer says every token ended, the caller's too.
func TestHolderRemovesUnprovenKey(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	k := userKey()
	reg := register(t, e, "self@example.org", k)
	if _, err := e.adm.SetPassword(ctx, &authv1.SetPasswordRequest{Email: "self@example.org", Password: "an operator's horse"}); err != nil {
		t.Fatal(err)
	}
	sr, err := e.pub.SignRequest(ctx, &authv1.SignRequestRequest{KeyId: reg.GetKeyId()})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: sr.GetCode(), Signature: sign(t, k, sr.GetCode())})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.pub.RemoveCredential(bearer(tok.GetAccessToken()), &authv1.RemoveCredentialRequest{Kind: "key", Id: strconv.Itoa(int(reg.GetKeyId()))})
	if err != nil || !res.GetSignedOut() {
		t.Fatalf("remove = %v %v", res, err)
	}
	_, err = e.pub.GetUserInfo(bearer(tok.GetAccessToken()), &authv1.GetUserInfoRequest{})
	wantCode(t, err, codes.PermissionDenied)
	if cs := e.credentials(t, "self@example.org"); len(cs) != 1 || cs[0].GetKind() != "password" || cs[0].GetAddedBy() != "operator" {
		t.Fatalf("credentials after = %v", cs)
	}
}
