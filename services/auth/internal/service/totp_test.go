package service

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/ratelimit"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
)

// totpEnv is an env whose clock the test moves.
type totpEnv struct {
	*env
	clock    time.Time
	clientID string
	secret   string
}

func newTOTPEnv(t *testing.T, mut ...func(*Config)) *totpEnv {
	t.Helper()
	e := &totpEnv{env: newEnv(t, mut...), clock: time.Unix(1_900_000_000, 0)}
	e.svc.now = func() time.Time { return e.clock }
	e.clientID, e.secret = e.seed(t)
	return e
}

// code is the TOTP code of secret at the env's clock plus d.
func (e *totpEnv) code(t *testing.T, secret string, d time.Duration) string {
	t.Helper()
	c, err := totp.GenerateCodeCustom(secret, e.clock.Add(d), totpOpts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// token signs Ada in with her password (no second factor yet) and answers
// an access token.
func (e *totpEnv) token(t *testing.T) string {
	t.Helper()
	code := e.login(t, e.clientID, nil)
	res, err := e.pub.Token(context.Background(), &authv1.TokenRequest{Code: code, ClientId: e.clientID, ClientSecret: e.secret})
	if err != nil {
		t.Fatal(err)
	}
	return res.GetAccessToken()
}

// enrol enrols a TOTP factor on the account page's calls and answers its
// secret and recovery codes.
func (e *totpEnv) enrol(t *testing.T) (string, []string) {
	t.Helper()
	ctx := bearer(e.token(t))
	_, err := e.pub.BeginTOTP(ctx, &authv1.BeginTOTPRequest{Password: "wrong horse"})
	wantCode(t, err, codes.Unauthenticated)
	b, err := e.pub.BeginTOTP(ctx, &authv1.BeginTOTPRequest{Password: "correct horse"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.GetUri(), "otpauth://totp/") || !strings.Contains(b.GetUri(), "secret="+b.GetSecret()) {
		t.Fatalf("uri %q", b.GetUri())
	}
	_, err = e.pub.FinishTOTP(ctx, &authv1.FinishTOTPRequest{Code: "000000"})
	if b.GetSecret() != "" && e.code(t, b.GetSecret(), 0) != "000000" {
		wantCode(t, err, codes.InvalidArgument)
	}
	f, err := e.pub.FinishTOTP(ctx, &authv1.FinishTOTPRequest{Code: e.code(t, b.GetSecret(), 0)})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.GetRecoveryCodes()) != recoveryCount {
		t.Fatalf("%d recovery codes", len(f.GetRecoveryCodes()))
	}
	return b.GetSecret(), f.GetRecoveryCodes()
}

func (e *totpEnv) password(t *testing.T) *authv1.LoginResponse {
	t.Helper()
	res, err := e.pub.Login(context.Background(), &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: e.clientID}, Email: "ada@example.org", Password: "correct horse"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (e *totpEnv) second(pending, code string) (*authv1.LoginResponse, error) {
	return e.pub.LoginSecondFactor(context.Background(), &authv1.LoginSecondFactorRequest{Request: &authv1.AuthorizeRequest{ClientId: e.clientID}, Pending: pending, Code: code})
}

// After enrolment the password issues no code; the code of this window
// does, once; the next window's code does; the secret is sealed at rest.
func TestTOTPEnrolAndSignIn(t *testing.T) {
	e := newTOTPEnv(t)
	secret, _ := e.enrol(t)
	// The enrolment spent this window's code.
	res := e.password(t)
	_, err := e.second(res.GetPending(), e.code(t, secret, 0))
	wantCode(t, err, codes.Unauthenticated)
	e.clock = e.clock.Add(30 * time.Second)
	if res.GetCode() != "" || res.GetPending() == "" || res.GetEnrol() {
		t.Fatalf("password step answered %v: want a pending sign-in, no code", res)
	}
	// A wrong code: refused, the pending sign-in stands.
	_, err = e.second(res.GetPending(), "12345x")
	wantCode(t, err, codes.Unauthenticated)
	ok, err := e.second(res.GetPending(), e.code(t, secret, 0))
	if err != nil || ok.GetCode() == "" {
		t.Fatalf("second factor = %v %v", ok, err)
	}
	// The pending sign-in is spent.
	_, err = e.second(res.GetPending(), e.code(t, secret, 30*time.Second))
	wantCode(t, err, codes.Unauthenticated)
	// Replay: the same window's code again, on a new sign-in.
	res = e.password(t)
	_, err = e.second(res.GetPending(), e.code(t, secret, 0))
	wantCode(t, err, codes.Unauthenticated)
	e.clock = e.clock.Add(30 * time.Second)
	if _, err := e.second(res.GetPending(), e.code(t, secret, 0)); err != nil {
		t.Fatalf("next window's code: %v", err)
	}
	// Another flow's request does not complete this one.
	res = e.password(t)
	e.clock = e.clock.Add(30 * time.Second)
	_, err = e.pub.LoginSecondFactor(context.Background(), &authv1.LoginSecondFactorRequest{
		Request: &authv1.AuthorizeRequest{ClientId: e.clientID, Scope: "openid"}, Pending: res.GetPending(), Code: e.code(t, secret, 0)})
	wantCode(t, err, codes.Unauthenticated)
	// Expired.
	res = e.password(t)
	e.clock = e.clock.Add(pendingTTL + time.Minute)
	_, err = e.second(res.GetPending(), e.code(t, secret, 0))
	wantCode(t, err, codes.Unauthenticated)
	u, err := e.store.GetUserByEmail(context.Background(), "ada@example.org")
	if err != nil {
		t.Fatal(err)
	}
	if u.TOTP == nil || bytes.Contains(u.TOTP.Secret, []byte(secret)) {
		t.Fatalf("secret stored in clear or not at all: %+v", u.TOTP)
	}
	cs := e.credentials(t, "ada@example.org")
	if last := cs[len(cs)-1]; last.GetKind() != kindTOTP || last.GetCreated() == 0 || last.GetLastUsed() == 0 {
		t.Fatalf("credentials %v: want the TOTP factor listed with when added and used", cs)
	}
}

// A recovery code signs in once; its dashes and case do not matter.
func TestTOTPRecoveryCodeSingleUse(t *testing.T) {
	buf := &syncBuffer{}
	e := newTOTPEnv(t, func(c *Config) { c.Audit = audit.New(buf, "auth") })
	_, recovery := e.enrol(t)
	res := e.password(t)
	if _, err := e.second(res.GetPending(), strings.ToLower(strings.ReplaceAll(recovery[3], "-", ""))); err != nil {
		t.Fatalf("recovery code: %v", err)
	}
	res = e.password(t)
	_, err := e.second(res.GetPending(), recovery[3])
	wantCode(t, err, codes.Unauthenticated)
	if _, err := e.second(res.GetPending(), recovery[4]); err != nil {
		t.Fatalf("another recovery code: %v", err)
	}
	if !strings.Contains(buf.String(), `"auth.recovery_code_use"`) || !strings.Contains(buf.String(), `"auth.totp_enrol"`) {
		t.Fatalf("audit log lacks the enrolment or the recovery: %s", buf.String())
	}
}

// Wrong codes meet the password's limits for the account and address.
func TestTOTPWrongCodesThrottled(t *testing.T) {
	per := ratelimit.Policy{Limit: ratelimit.Limit{Events: 3, Per: time.Hour, Burst: 3}}
	e := newTOTPEnv(t, func(c *Config) {
		c.Guards.Login = ratelimit.New(nil, nil, nil).Guard("login", per, ratelimit.Policy{})
	})
	secret, _ := e.enrol(t)
	e.clock = e.clock.Add(time.Minute)
	res := e.password(t) // the password's check takes one of the 3
	throttled := false
	for i := range 5 {
		_, err := e.second(res.GetPending(), fmt.Sprintf("%06d", i))
		if c := codesOf(err); c == codes.ResourceExhausted {
			throttled = true
			break
		} else if c != codes.Unauthenticated {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	if !throttled {
		t.Fatal("5 wrong codes were all checked")
	}
	_ = secret
}

// A role that requires a second factor leads its holder to enrol before
// any code; the factor enrolled is then asked for.
func TestTOTPRoleRequiresEnrolment(t *testing.T) {
	e := newTOTPEnv(t, func(c *Config) { c.RequireSecondFactor = []string{"mdr:secret"} })
	res := e.password(t)
	if res.GetCode() != "" || !res.GetEnrol() || res.GetTotpSecret() == "" || res.GetPending() == "" {
		t.Fatalf("password step answered %v: want an enrolment", res)
	}
	_, err := e.second(res.GetPending(), "000000x")
	wantCode(t, err, codes.Unauthenticated)
	ok, err := e.second(res.GetPending(), e.code(t, res.GetTotpSecret(), 0))
	if err != nil || ok.GetCode() == "" || len(ok.GetRecoveryCodes()) != recoveryCount {
		t.Fatalf("enrolment = %v %v", ok, err)
	}
	e.clock = e.clock.Add(30 * time.Second)
	again := e.password(t)
	if again.GetEnrol() || again.GetPending() == "" || again.GetCode() != "" {
		t.Fatalf("after enrolment: %v", again)
	}
	// Without the role nothing is asked.
	f := newTOTPEnv(t, func(c *Config) { c.RequireSecondFactor = []string{"fris:operator"} })
	if r := f.password(t); r.GetCode() == "" || r.GetPending() != "" {
		t.Fatalf("no role: %v", r)
	}
}

// Removing the factor asks its holder for a code or the password; an
// operator removes it too.
func TestTOTPRemove(t *testing.T) {
	e := newTOTPEnv(t)
	// A verified address: the factor is proven, and its holder's removal
	// ends no session (an unproven one's would, as an unproven key's).
	u, err := e.store.GetUserByEmail(context.Background(), "ada@example.org")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.UpdateUser(context.Background(), u.ID, func(cur *storage.User) error { cur.EmailVerified = true; return nil }); err != nil {
		t.Fatal(err)
	}
	secret, _ := e.enrol(t)
	e.clock = e.clock.Add(30 * time.Second)
	res := e.password(t)
	ok, err := e.second(res.GetPending(), e.code(t, secret, 0))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := e.pub.Token(context.Background(), &authv1.TokenRequest{Code: ok.GetCode(), ClientId: e.clientID, ClientSecret: e.secret})
	if err != nil {
		t.Fatal(err)
	}
	ctx := bearer(tr.GetAccessToken())
	_, err = e.pub.RemoveCredential(ctx, &authv1.RemoveCredentialRequest{Kind: kindTOTP, Proof: "wrong"})
	wantCode(t, err, codes.Unauthenticated)
	if _, err := e.pub.RemoveCredential(ctx, &authv1.RemoveCredentialRequest{Kind: kindTOTP, Proof: "correct horse"}); err != nil {
		t.Fatal(err)
	}
	if r := e.password(t); r.GetCode() == "" {
		t.Fatalf("after removal the password asks for more: %v", r)
	}
	e.enrol(t)
	if _, err := e.adm.RemoveUserCredential(context.Background(), &authv1.RemoveUserCredentialRequest{Email: "ada@example.org", Kind: kindTOTP}); err != nil {
		t.Fatal(err)
	}
	if r := e.password(t); r.GetCode() == "" {
		t.Fatalf("after the operator's removal: %v", r)
	}
}

func codesOf(err error) codes.Code { return status.Code(err) }

// A stranger who registered the victim's address with a key enrols a
// second factor on it: the owner's reset removes it with the key, so the
// stranger does not hold the owner's sign-ins.
func TestTOTPOfAStrangerRemovedAtReset(t *testing.T) {
	e, box := newAccountEnv(t)
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
	sctx := bearer(stranger.GetAccessToken())
	b, err := e.pub.BeginTOTP(sctx, &authv1.BeginTOTPRequest{})
	if err != nil {
		t.Fatal(err)
	}
	code, err := totp.GenerateCodeCustom(b.GetSecret(), time.Now(), totpOpts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.pub.FinishTOTP(sctx, &authv1.FinishTOTPRequest{Code: code}); err != nil {
		t.Fatal(err)
	}
	cs := e.credentials(t, victim)
	if last := cs[len(cs)-1]; last.GetKind() != kindTOTP || last.GetProven() {
		t.Fatalf("the stranger's factor is listed as %v, want unproven", last)
	}
	if err := requestReset(e, ctx, victim); err != nil {
		t.Fatal(err)
	}
	res, err := e.pub.ResetPassword(ctx, &authv1.ResetPasswordRequest{Token: tokenOf(t, box.resets()[0], "/oauth2/reset"), Password: "the owner's own"})
	if err != nil {
		t.Fatal(err)
	}
	if rm := res.GetRemoved(); len(rm) != 2 || rm[1].GetKind() != kindTOTP {
		t.Fatalf("removed = %v, want the key and the second factor", rm)
	}
	c, err := e.adm.CreateClient(ctx, &authv1.CreateClientRequest{Name: "Demo", RedirectUrl: "https://app.example/cb", ClientId: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	lr, err := e.pub.Login(ctx, &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: c.GetClient().GetClient().GetClientId()}, Email: victim, Password: "the owner's own"})
	if err != nil || lr.GetCode() == "" || lr.GetPending() != "" {
		t.Fatalf("the owner's password after the reset = %v %v", lr, err)
	}
}
