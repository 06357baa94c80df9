package e2e

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The attack of issue 42, finding 1: a stranger registers someone else's
// address with the stranger's own key (anonymous; nobody has verified the
// address). The owner later claims the account with "Forgot your
// password?" and the link auth sends. Before, the reset set a password and
// verified the address but kept the stranger's key, whose signed-code
// sign-in went on working once an operator granted a role. Now the
// owner's proof removes every credential nobody had proven, the reset's
// page names it, and the stranger's sign requests and tokens are refused.
func TestAttackStrangersKeyDiesWithTheOwnersReset(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{})
	seedAuth(t, s)
	const victim = "victim@fris.test"
	stranger := from127(t, s, "127.0.0.2", nil)
	owner := from127(t, s, "127.0.0.3", nil)

	// The stranger registers the victim's address with the stranger's key
	// and signs in with it.
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	spki := spkiB64(t, &key.PublicKey)
	res, b := stranger.do(t, http.MethodPost, oauth+"/register",
		fmt.Sprintf(`{"email":%q,"name":"Victim","description":"stranger's laptop","base64EncodedPublicKey":%q}`, victim, spki), "Content-Type", "application/json")
	if res.StatusCode != 200 {
		t.Fatalf("register = %d %s", res.StatusCode, b)
	}
	keyID := int(field(t, JSON(t, b), "keyId").(float64))
	signIn := func() (*http.Response, []byte) {
		t.Helper()
		res, b := stranger.do(t, http.MethodPost, oauth+"/signRequest", fmt.Sprintf(`{"keyId":%d}`, keyID), "Content-Type", "application/json")
		if res.StatusCode != 200 {
			return res, b
		}
		code := field(t, JSON(t, b), "code").(string)
		h := sha512.Sum512([]byte(code))
		sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA512, h[:])
		if err != nil {
			t.Fatal(err)
		}
		return stranger.do(t, http.MethodPost, oauth+"/token", fmt.Sprintf(`{"code":%q,"signature":%q}`, code, base64.StdEncoding.EncodeToString(sig)),
			"Content-Type", "application/json")
	}
	res, b = signIn()
	if res.StatusCode != 200 {
		t.Fatalf("the stranger's sign-in before = %d %s", res.StatusCode, b)
	}
	before, _, refresh := tokens(t, JSON(t, b))

	// The owner claims the account: forgot password, the link, a password.
	if res, b := owner.forgot(t, victim); res.StatusCode != 200 {
		t.Fatalf("forgot = %d %s", res.StatusCode, b)
	}
	f, _ := owner.page(t, strings.TrimPrefix(newResetLink(t, s, victim, 1), Issuer), 200)
	f.Set("password", "the owner's own horse")
	f.Set("password2", "the owner's own horse")
	res, page := owner.postForm(t, oauth+"/reset", f)
	if res.StatusCode != 200 || !strings.Contains(string(page), "Your password has been changed") {
		t.Fatalf("reset = %d %s", res.StatusCode, page)
	}
	// An operator grants a role: the address is the owner's now and the
	// account holds nothing unproven, so no confirmation is needed.
	s.AuthCLI(t, 0, "set-scopes", "-scopes", "broker:researcher", victim)

	// The stranger's key is gone, by id and by hash, and its tokens with it.
	if res, b := signIn(); res.StatusCode != http.StatusNotFound {
		t.Fatalf("the stranger's sign-in after the owner's reset = %d %s", res.StatusCode, b)
	}
	sum := sha512.Sum512(mustB64(t, spki))
	if res, b := stranger.do(t, http.MethodPost, oauth+"/sign_request", fmt.Sprintf(`{"sha512Hash":%q}`, hex.EncodeToString(sum[:])),
		"Content-Type", "application/json"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("sign request by the key's hash = %d %s", res.StatusCode, b)
	}
	waitUserinfoRefused(t, s, before)
	if res, b := stranger.do(t, http.MethodPost, oauth+"/token", fmt.Sprintf(`{"grant_type":"refresh_token","refresh_token":%q}`, refresh),
		"Content-Type", "application/json"); res.StatusCode < 400 || res.StatusCode >= 500 {
		t.Fatalf("the stranger's refresh token = %d %s", res.StatusCode, b)
	}
	if res, b := stranger.do(t, http.MethodGet, sb+"/researcher/inquiries", "", bearer(before)...); res.StatusCode != http.StatusUnauthorized && res.StatusCode != http.StatusForbidden {
		t.Fatalf("the researcher API with the stranger's token = %d %s", res.StatusCode, b)
	}
	// The owner was told what was removed.
	want := regexp.MustCompile(`<li data-kind="key" data-id="` + fmt.Sprint(keyID) + `">Key ` + fmt.Sprint(keyID) + ` „stranger&#39;s laptop“`)
	if !strings.Contains(string(page), "Nobody had proven these ways to sign in") || !want.Match(page) {
		t.Fatalf("the reset's page does not name the removed key:\n%s", page)
	}
	// And the operator sees a password set by the reset, nothing else.
	list := s.AuthCLI(t, 0, "credentials", victim)
	if !regexp.MustCompile(`(?m)^password\s+-\s+-\s+\S+\s+reset\s+true\s`).MatchString(list) || strings.Contains(list, "\nkey") {
		t.Fatalf("credentials after the reset:\n%s", list)
	}
	// The address has a verified owner: registering it again is refused.
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	if res, b := stranger.do(t, http.MethodPost, oauth+"/register", fmt.Sprintf(`{"email":%q,"base64EncodedPublicKey":%q}`, victim, spkiB64(t, &other.PublicKey)),
		"Content-Type", "application/json"); res.StatusCode != http.StatusConflict {
		t.Fatalf("registering the owned address again = %d %s", res.StatusCode, b)
	}
}

// An operator lists a user's credentials and removes a key with bin/auth;
// a grant to an account with an unproven key asks for -confirm.
func TestOperatorListsAndRemovesKeys(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{})
	u := registerKeyUser(t, s, "keyholder@fris.test")
	access, _ := u.signIn(t, s)
	list := s.AuthCLI(t, 0, "credentials", u.email)
	row := regexp.MustCompile(fmt.Sprintf(`(?m)^key\s+%d\s+-\s+\S+\s+registration\s+false\s+\d{4}-`, u.keyID))
	if !row.MatchString(list) {
		t.Fatalf("credentials:\n%s", list)
	}
	if out := s.AuthCLI(t, 1, "set-scopes", "-scopes", "broker:researcher", u.email); !strings.Contains(out, "confirm") {
		t.Fatalf("an unconfirmed grant to an unproven account:\n%s", out)
	}
	s.AuthCLI(t, 1, "remove-key", u.email, "999999")
	s.AuthCLI(t, 0, "remove-key", u.email, fmt.Sprint(u.keyID))
	if res, b := postJSON(t, s, oauth+"/sign_request", fmt.Sprintf(`{"keyId":%d}`, u.keyID)); res.StatusCode != http.StatusNotFound {
		t.Fatalf("sign request after remove-key = %d %v", res.StatusCode, b)
	}
	waitUserinfoRefused(t, s, access)
	if list := s.AuthCLI(t, 0, "credentials", u.email); strings.Contains(list, "\nkey") {
		t.Fatalf("credentials after remove-key:\n%s", list)
	}
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitUserinfoRefused waits until /oauth2/userinfo refuses tok (the
// gateway learns revocations within its poll), failing beyond
// revocationBound.
func waitUserinfoRefused(t *testing.T, s *Stack, tok string) {
	t.Helper()
	since := time.Now()
	for {
		res, b := s.Do(t, http.MethodGet, oauth+"/userinfo", nil, bearer(tok)...)
		if res.StatusCode == http.StatusForbidden || res.StatusCode == http.StatusUnauthorized {
			return
		}
		if res.StatusCode != 200 || time.Since(since) > revocationBound {
			t.Fatalf("GET /oauth2/userinfo = %d %v after the revocation: %s", res.StatusCode, time.Since(since), b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
