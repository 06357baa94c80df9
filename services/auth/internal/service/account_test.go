package service

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"fris.dev/pkg/ratelimit"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
)

// outbox records mails; the service sends them in line (spawn) so a test
// sees each at once.
type outbox struct {
	mu    sync.Mutex
	mails []sentMail
}

type sentMail struct{ to, subject, body string }

func (o *outbox) Send(_ context.Context, to, subject, body string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.mails = append(o.mails, sentMail{to, subject, body})
	return nil
}

func (o *outbox) all() []sentMail {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]sentMail(nil), o.mails...)
}

// resets are the password-reset mails (a user created unverified is
// mailed a verification link too).
func (o *outbox) resets() []sentMail {
	var out []sentMail
	for _, m := range o.all() {
		if strings.Contains(m.subject, "reset your password") {
			out = append(out, m)
		}
	}
	return out
}

func newAccountEnv(t *testing.T, mut ...func(*Config)) (*env, *outbox) {
	t.Helper()
	box := &outbox{}
	e := newEnv(t, append([]func(*Config){func(c *Config) { c.Mail = box }}, mut...)...)
	e.svc.spawn = func(f func()) { f() }
	return e, box
}

// linkToken reads the token out of a reset mail's link.
func tokenOf(t *testing.T, m sentMail, path string) string {
	t.Helper()
	for _, line := range strings.Split(m.body, "\r\n") {
		if strings.HasPrefix(line, issuer) {
			u, err := url.Parse(line)
			if err != nil || u.Path != path {
				t.Fatalf("link %q, want path %s", line, path)
			}
			return u.Query().Get("token")
		}
	}
	t.Fatalf("no link in the mail:\n%s", m.body)
	return ""
}

func requestReset(e *env, ctx context.Context, email string) error {
	_, err := e.pub.RequestPasswordReset(ctx, &authv1.RequestPasswordResetRequest{Email: email})
	return err
}

func TestPasswordResetFlow(t *testing.T) {
	e, box := newAccountEnv(t)
	clientID, secret := e.seed(t)
	ctx := context.Background()
	// A session of the old password, which the reset ends.
	tok, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	if err := requestReset(e, ctx, " ADA@example.org "); err != nil {
		t.Fatal(err)
	}
	mails := box.resets()
	if len(mails) != 1 || mails[0].to != "ada@example.org" || !strings.Contains(mails[0].subject, "reset") {
		t.Fatalf("mails = %+v", mails)
	}
	token := tokenOf(t, mails[0], "/oauth2/reset")
	if len(token) != 43 {
		t.Fatalf("token %q, want 256 bits in base64url", token)
	}
	reset := authv1.AccountTokenPurpose_ACCOUNT_TOKEN_PURPOSE_PASSWORD_RESET
	if res, err := e.pub.CheckAccountToken(ctx, &authv1.CheckAccountTokenRequest{Token: token, Purpose: reset}); err != nil || res.GetEmail() != "ada@example.org" {
		t.Fatalf("check = %v, %v", res, err)
	}
	// Another purpose, or a password the policy refuses: the link stays.
	_, err = e.pub.CheckAccountToken(ctx, &authv1.CheckAccountTokenRequest{Token: token, Purpose: authv1.AccountTokenPurpose_ACCOUNT_TOKEN_PURPOSE_EMAIL_VERIFICATION})
	wantCode(t, err, codes.NotFound)
	_, err = e.pub.ResetPassword(ctx, &authv1.ResetPasswordRequest{Token: token, Password: "short"})
	wantCode(t, err, codes.InvalidArgument)

	if _, err := e.pub.ResetPassword(ctx, &authv1.ResetPasswordRequest{Token: token, Password: "a new horse battery"}); err != nil {
		t.Fatal(err)
	}
	_, err = e.pub.ResetPassword(ctx, &authv1.ResetPasswordRequest{Token: token, Password: "a third horse"})
	wantCode(t, err, codes.NotFound) // single use
	_, err = e.pub.CheckAccountToken(ctx, &authv1.CheckAccountTokenRequest{Token: token, Purpose: reset})
	wantCode(t, err, codes.NotFound)

	_, err = e.pub.Login(ctx, &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: "ada@example.org", Password: "correct horse"})
	wantCode(t, err, codes.Unauthenticated)
	if _, err := e.pub.Login(ctx, &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: "ada@example.org", Password: "a new horse battery"}); err != nil {
		t.Fatalf("the new password: %v", err)
	}
	_, err = e.pub.GetUserInfo(bearer(tok.GetAccessToken()), &authv1.GetUserInfoRequest{})
	wantCode(t, err, codes.PermissionDenied)
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{GrantType: grantRefresh, ClientId: clientID, ClientSecret: secret, RefreshToken: tok.GetRefreshToken()})
	if err == nil {
		t.Fatal("the old session's refresh token still works")
	}
	u, err := e.store.GetUserByEmail(ctx, "ada@example.org")
	if err != nil || !u.EmailVerified {
		t.Fatalf("following the link proves the address: %+v %v", u, err)
	}
}

// The answer for an address no account has (or a disabled one) is the
// answer for a known one; only the known, enabled account gets a mail.
func TestPasswordResetSameAnswerForUnknownEmail(t *testing.T) {
	e, box := newAccountEnv(t)
	e.seed(t)
	ctx := context.Background()
	if _, err := e.adm.CreateUser(ctx, &authv1.CreateUserRequest{Email: "gone@example.org", Password: "a password of mine"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.adm.SetUserDisabled(ctx, &authv1.SetUserDisabledRequest{Email: "gone@example.org", Disabled: true}); err != nil {
		t.Fatal(err)
	}
	known, errKnown := e.pub.RequestPasswordReset(ctx, &authv1.RequestPasswordResetRequest{Email: "ada@example.org"})
	for _, email := range []string{"nobody@example.org", "gone@example.org"} {
		res, err := e.pub.RequestPasswordReset(ctx, &authv1.RequestPasswordResetRequest{Email: email})
		if err != nil || errKnown != nil || res.String() != known.String() {
			t.Fatalf("%s: %v %v, known: %v %v", email, res, err, known, errKnown)
		}
	}
	if m := box.resets(); len(m) != 1 || m[0].to != "ada@example.org" {
		t.Fatalf("mails = %+v", m)
	}
	_, err := e.pub.RequestPasswordReset(ctx, &authv1.RequestPasswordResetRequest{Email: "not an address"})
	wantCode(t, err, codes.InvalidArgument)
}

// The store holds the token's hash, never the token.
func TestPasswordResetStoresOnlyTheHash(t *testing.T) {
	e, box := newAccountEnv(t)
	e.seed(t)
	ctx := context.Background()
	before := time.Now()
	if err := requestReset(e, ctx, "ada@example.org"); err != nil {
		t.Fatal(err)
	}
	token := tokenOf(t, box.resets()[0], "/oauth2/reset")
	es, err := e.db.Scan(ctx, "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range es {
		if strings.Contains(en.Key, token) || bytes.Contains(en.Value, []byte(token)) {
			t.Fatalf("token in clear under %q", en.Key)
		}
	}
	rec, err := e.store.PeekAccountToken(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	// Short-lived: the default 30 minutes from the request.
	if lo, hi := before.Add(30*time.Minute).Unix(), time.Now().Add(30*time.Minute).Unix(); rec.Expires < lo || rec.Expires > hi || rec.Purpose != storage.TokenPasswordReset {
		t.Fatalf("record %+v, want expiry in [%d, %d]", rec, lo, hi)
	}
}

// A link is for the password it replaces: once the password changed (by
// another link, or an operator), older links are dead.
func TestPasswordResetLinksDieWithThePassword(t *testing.T) {
	e, box := newAccountEnv(t)
	e.seed(t)
	ctx := context.Background()
	for range 3 {
		if err := requestReset(e, ctx, "ada@example.org"); err != nil {
			t.Fatal(err)
		}
	}
	m := box.resets()
	first, second, third := tokenOf(t, m[0], "/oauth2/reset"), tokenOf(t, m[1], "/oauth2/reset"), tokenOf(t, m[2], "/oauth2/reset")
	if _, err := e.pub.ResetPassword(ctx, &authv1.ResetPasswordRequest{Token: second, Password: "a new horse battery"}); err != nil {
		t.Fatal(err)
	}
	_, err := e.pub.ResetPassword(ctx, &authv1.ResetPasswordRequest{Token: first, Password: "another horse"})
	wantCode(t, err, codes.NotFound)
	if err := requestReset(e, ctx, "ada@example.org"); err != nil {
		t.Fatal(err)
	}
	fourth := tokenOf(t, box.resets()[3], "/oauth2/reset")
	if _, err := e.adm.SetPassword(ctx, &authv1.SetPasswordRequest{Email: "ada@example.org", Password: "operator's choice"}); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{third, fourth} {
		_, err = e.pub.ResetPassword(ctx, &authv1.ResetPasswordRequest{Token: tok, Password: "another horse"})
		wantCode(t, err, codes.NotFound)
	}
}

// Requests are limited per email and client address and per address; the
// account's ceiling, which strangers from many addresses reach, does not
// hold back the holder's known device.
func TestPasswordResetLimits(t *testing.T) {
	pol := func(n int) ratelimit.Policy {
		return ratelimit.Policy{Limit: ratelimit.Limit{Events: n, Per: time.Hour, Burst: n}}
	}
	e, box := newAccountEnv(t, func(c *Config) {
		limits := ratelimit.New(nil, nil, nil)
		c.Guards.Login = limits.Guard("login", pol(5), ratelimit.Policy{})
		c.Guards.Reset = limits.Guard("password_reset", pol(2), pol(3)).WithCeiling(pol(4))
	})
	clientID, _ := e.seed(t)
	res, err := e.pub.Login(fromAddr("192.0.2.1"), &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: "ada@example.org", Password: "correct horse"})
	if err != nil {
		t.Fatal(err)
	}
	device := res.GetDevice()
	ask := func(addr, email, device string) error {
		_, err := e.pub.RequestPasswordReset(fromAddr(addr), &authv1.RequestPasswordResetRequest{Email: email, Device: device})
		return err
	}
	for _, want := range []codes.Code{codes.OK, codes.OK, codes.ResourceExhausted} {
		wantCode(t, ask("198.51.100.1", "ada@example.org", ""), want) // the pair: 2
	}
	// The address's budget (3) holds for unknown emails alike.
	wantCode(t, ask("198.51.100.1", "nobody@example.org", ""), codes.OK)
	wantCode(t, ask("198.51.100.1", "nobody2@example.org", ""), codes.ResourceExhausted)
	// Strangers from other addresses reach the ceiling (4, two spent above).
	refused := 0
	for i := range 5 {
		if err := ask(fmt.Sprintf("203.0.113.%d", i+1), "ada@example.org", ""); err != nil {
			wantCode(t, err, codes.ResourceExhausted)
			refused++
		}
	}
	if refused != 3 {
		t.Fatalf("%d of 5 strangers refused, want 3 past the ceiling", refused)
	}
	wantCode(t, ask("192.0.2.7", "ada@example.org", ""), codes.ResourceExhausted)
	sent := len(box.resets())
	if err := ask("192.0.2.7", "ada@example.org", device); err != nil {
		t.Fatalf("the holder's device: %v", err)
	}
	if len(box.resets()) != sent+1 {
		t.Fatal("no mail for the holder")
	}
}

// Tokens that do not work are limited per client address.
func TestAccountLinkGuessesLimited(t *testing.T) {
	e, _ := newAccountEnv(t, func(c *Config) {
		c.Guards.Link = ratelimit.New(nil, nil, nil).Guard("account_link", ratelimit.Policy{}, ratelimit.Policy{Limit: ratelimit.Limit{Events: 3, Per: time.Hour, Burst: 3}})
	})
	reset := authv1.AccountTokenPurpose_ACCOUNT_TOKEN_PURPOSE_PASSWORD_RESET
	for i, want := range []codes.Code{codes.NotFound, codes.NotFound, codes.NotFound, codes.ResourceExhausted} {
		_, err := e.pub.CheckAccountToken(fromAddr("198.51.100.1"), &authv1.CheckAccountTokenRequest{Token: fmt.Sprintf("guess-%d", i), Purpose: reset})
		wantCode(t, err, want)
	}
	_, err := e.pub.CheckAccountToken(fromAddr("198.51.100.2"), &authv1.CheckAccountTokenRequest{Token: "guess", Purpose: reset})
	wantCode(t, err, codes.NotFound)
}
