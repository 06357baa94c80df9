package service

import (
	"context"
	"encoding/base64"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"fris.dev/pkg/kv"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

func TestClientSecretFlow(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clientID, secret := e.seed(t)
	code := e.login(t, clientID, &authv1.AuthorizeRequest{Nonce: "n-123"})

	// Wrong secret, unknown client, unknown code: 404, and the code survives
	// a failed client authentication.
	_, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: code, ClientId: clientID, ClientSecret: "wrong-secret-wrong"})
	wantCode(t, err, codes.NotFound)
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{Code: code, ClientId: "nope", ClientSecret: secret})
	wantCode(t, err, codes.NotFound)
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{Code: "no-such-code", ClientId: clientID, ClientSecret: secret})
	wantCode(t, err, codes.NotFound)

	res, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: code, ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	a := claims(t, res.GetAccessToken())
	if a.Issuer() != issuer || a.Subject() != e.uid(t, "ada@example.org") || a.Audience()[0] != clientID {
		t.Fatalf("access claims: iss=%s sub=%s aud=%v", a.Issuer(), a.Subject(), a.Audience())
	}
	if typ, _ := a.Get("type"); typ != "ACCESS_TOKEN" {
		t.Fatalf("type = %v", typ)
	}
	if n, _ := a.Get("nonce"); n != "n-123" {
		t.Fatalf("nonce = %v", n)
	}
	// One space-separated string (RFC 9068), as the Samply auth client
	// reads it; /tokeninfo still lists it as an array.
	if sc, _ := a.Get("scope"); sc != "openid mdr:secret users:search" {
		t.Fatalf("scope = %#v, want the string \"openid mdr:secret users:search\"", sc)
	}
	if res.GetTokenType() != "Bearer" || res.GetExpiresIn() != 3600 {
		t.Fatalf("token_type %q expires_in %d", res.GetTokenType(), res.GetExpiresIn())
	}
	if !a.NotBefore().Before(time.Now()) || a.Expiration().Sub(time.Now()) < 59*time.Minute {
		t.Fatalf("nbf %v exp %v", a.NotBefore(), a.Expiration())
	}
	id := claims(t, res.GetIdToken())
	if typ, _ := id.Get("type"); typ != "ID_TOKEN" {
		t.Fatalf("id type = %v", typ)
	}
	if em, _ := id.Get("email"); em != "ada@example.org" {
		t.Fatalf("id email = %v", em)
	}
	if nm, _ := id.Get("name"); nm != "Ada Lovelace" {
		t.Fatalf("id name = %v", nm)
	}
	if n, _ := id.Get("nonce"); n != "n-123" {
		t.Fatalf("id nonce = %v, want the authorization request's", n)
	}
	if typ, _ := claims(t, res.GetRefreshToken()).Get("type"); typ != "REFRESH_TOKEN" {
		t.Fatalf("refresh type = %v", typ)
	}
	// The kid in the header is a published /certs keyId.
	certs, _ := e.pub.ListCerts(ctx, &authv1.ListCertsRequest{})
	if !strings.Contains(res.GetAccessToken(), ".") || len(certs.GetKeys()) != 1 || kidOf(t, res.GetAccessToken()) != certs.GetKeys()[0].GetKeyId() {
		t.Fatalf("kid %s not in /certs %v", kidOf(t, res.GetAccessToken()), certs.GetKeys())
	}

	// Codes are single use.
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{Code: code, ClientId: clientID, ClientSecret: secret})
	wantCode(t, err, codes.NotFound)

	// A disabled client: 401.
	code = e.login(t, clientID, nil)
	if _, err := e.adm.SetClientDisabled(ctx, &authv1.SetClientDisabledRequest{ClientId: clientID, Disabled: true}); err != nil {
		t.Fatal(err)
	}
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{Code: code, ClientId: clientID, ClientSecret: secret})
	wantCode(t, err, codes.Unauthenticated)
	if cl, _ := e.pub.ListClients(ctx, &authv1.ListClientsRequest{}); len(cl.GetClients()) != 0 {
		t.Fatalf("disabled client listed: %v", cl)
	}
}

func TestRefreshRotationAndReuse(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clientID, secret := e.seed(t)
	first, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	// refresh_token alone is enough.
	second, err := e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: first.GetRefreshToken()})
	if err != nil {
		t.Fatal(err)
	}
	if second.GetRefreshToken() == first.GetRefreshToken() || second.GetAccessToken() == "" {
		t.Fatal("refresh token not rotated")
	}
	third, err := e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: second.GetRefreshToken()})
	if err != nil {
		t.Fatal(err)
	}
	// The chain is the refresh token's sid: one per sign-in, kept on rotation.
	sid := func(tok string) string {
		v, _ := claims(t, tok).Get("sid")
		s, _ := v.(string)
		return s
	}
	if sid(first.GetRefreshToken()) == "" || sid(second.GetRefreshToken()) != sid(first.GetRefreshToken()) ||
		sid(third.GetRefreshToken()) != sid(first.GetRefreshToken()) {
		t.Fatalf("sids %q %q %q, want one chain", sid(first.GetRefreshToken()), sid(second.GetRefreshToken()), sid(third.GetRefreshToken()))
	}
	// The access token carries its chain too, so revoking the chain ends it.
	if sid(first.GetAccessToken()) != sid(first.GetRefreshToken()) {
		t.Fatalf("access token's sid %q, want the chain's", sid(first.GetAccessToken()))
	}
	other, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	if sid(other.GetRefreshToken()) == sid(first.GetRefreshToken()) {
		t.Fatal("two sign-ins share a chain")
	}
	// Reusing the first token: 403, and the chain's newest token dies too.
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: first.GetRefreshToken()})
	wantCode(t, err, codes.PermissionDenied)
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: third.GetRefreshToken()})
	wantCode(t, err, codes.PermissionDenied)
	// The other sign-in's chain is untouched.
	if _, err := e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: other.GetRefreshToken()}); err != nil {
		t.Fatalf("other chain: %v", err)
	}
	// A refresh token of ours without a chain (issued before tokens
	// carried it) is refused: 403, not a fresh chain.
	legacy, err := e.svc.tokens.Plan(tokens.Subject{UserID: 1, ClientID: clientID}).Sign()
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: legacy.Refresh})
	wantCode(t, err, codes.PermissionDenied)

	// Unparseable: 400; an access token as refresh token: 403.
	for _, bad := range []string{"garbage", "a.b.c", first.GetRefreshToken()[:len(first.GetRefreshToken())-4] + "AAAA"} {
		_, err = e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: bad})
		wantCode(t, err, codes.InvalidArgument)
	}
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: third.GetAccessToken()})
	wantCode(t, err, codes.PermissionDenied)
	// No payload: 400.
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{})
	wantCode(t, err, codes.InvalidArgument)
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{ClientId: clientID, ClientSecret: secret})
	wantCode(t, err, codes.InvalidArgument)
}

// TestBusyHashingSlotsAreNotWrongCredentials: when every argon2 slot is
// taken and the request's deadline passes while it waits, the service must
// answer DeadlineExceeded for a correct password or client secret, never
// "wrong credentials" (which its logs and metrics would count as a failed
// login), and the code presented with the secret must survive for a retry.
// The methods are called directly: over gRPC the caller's own deadline
// would hide the service's answer.
func TestBusyHashingSlotsAreNotWrongCredentials(t *testing.T) {
	e := newEnv(t)
	clientID, secret := e.seed(t)
	code := e.login(t, clientID, nil)
	// A user whose password no check has cached yet (the hasher remembers
	// successful checks, Ada's among them now).
	if _, err := e.adm.CreateUser(context.Background(), &authv1.CreateUserRequest{Email: "bob@example.org", RealName: "Bob", Password: "battery staple"}); err != nil {
		t.Fatal(err)
	}

	// Checks against a hash with a high cost hold every slot for a while
	// (the parameters come from the hash, not from the hasher).
	salt := base64.RawStdEncoding.EncodeToString(make([]byte, 16))
	slow := "$argon2id$v=19$m=32768,t=32,p=1$" + salt + "$" + base64.RawStdEncoding.EncodeToString(make([]byte, 32))
	var busy sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		busy.Go(func() { _ = e.svc.hash.Check(context.Background(), slow, "x") })
	}
	defer busy.Wait()

	pub := Public{Service: e.svc}
	short := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), 20*time.Millisecond)
	}
	// Wait until the busy checks hold every slot: a hash (never cached)
	// then gives up waiting.
	held := false
	for try := 0; try < 200 && !held; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		_, err := e.svc.hash.Hash(ctx, "probe")
		cancel()
		held = errors.Is(err, context.DeadlineExceeded)
	}
	if !held {
		t.Fatal("the busy checks never held the slots")
	}
	// They hold them for hundreds of milliseconds more.
	ctx, cancel := short()
	_, err := pub.Login(ctx, &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: "bob@example.org", Password: "battery staple"})
	cancel()
	wantCode(t, err, codes.DeadlineExceeded)
	ctx, cancel = short()
	_, err = pub.Token(ctx, &authv1.TokenRequest{Code: code, ClientId: clientID, ClientSecret: secret})
	cancel()
	wantCode(t, err, codes.DeadlineExceeded)
	busy.Wait()

	// The code was not spent by the request that timed out.
	if _, err := e.pub.Token(context.Background(), &authv1.TokenRequest{Code: code, ClientId: clientID, ClientSecret: secret}); err != nil {
		t.Fatalf("the code after the slots freed: %v", err)
	}
}

// countingKV counts the transactions a store commits.
type countingKV struct {
	kv.Store
	updates atomic.Int64
}

func (c *countingKV) Update(ctx context.Context, fn func(tx kv.Tx) error) error {
	c.updates.Add(1)
	return c.Store.Update(ctx, fn)
}

// TestSignInCommitsNothingDurable: a sign-in's refresh token carries its
// chain, so the signature flow and the code flow commit nothing to the
// durable store (their codes, and the login form's record of the sign-in,
// live in the volatile one); only a refresh
// commits, once, and a credential's first use in a minute (its last use).
func TestSignInCommitsNothingDurable(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clientID, secret := e.seed(t)
	durable, codes := &countingKV{Store: e.db}, &countingKV{Store: e.db}
	e.svc.store = storage.NewSplit(durable, codes, testSealer(t))

	k := userKey()
	reg, err := e.pub.Register(ctx, &authv1.RegisterRequest{Email: "grace@example.org", Name: "Grace", Base64EncodedPublicKey: base64.StdEncoding.EncodeToString(spki(t, k))})
	if err != nil {
		t.Fatal(err)
	}
	signInBoth := func() *authv1.TokenResponse {
		t.Helper()
		sr, err := e.pub.SignRequest(ctx, &authv1.SignRequestRequest{KeyId: reg.GetKeyId()})
		if err != nil {
			t.Fatal(err)
		}
		signed, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: sr.GetCode(), ClientId: clientID, Signature: sign(t, k, sr.GetCode())})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret}); err != nil {
			t.Fatal(err)
		}
		return signed
	}
	// The first sign-in with a credential records its last use, durably;
	// the next ones within a minute write nothing.
	signInBoth()
	durable.updates.Store(0)
	codes.updates.Store(0)
	signed := signInBoth()
	if n := durable.updates.Load(); n != 0 {
		t.Fatalf("two sign-ins committed %d durable transactions, want 0", n)
	}
	if n := codes.updates.Load(); n != 8 {
		t.Fatalf("two sign-ins committed %d code transactions, want 8 (put and take each, each sign-in's record for the account page and for the users view)", n)
	}
	if res, err := e.adm.ListUserSignIns(ctx, &authv1.ListUserSignInsRequest{Email: "grace@example.org"}); err != nil || len(res.GetSignIns()) != 2 || res.GetSignIns()[0].GetMethod() != "key" || res.GetSignIns()[0].GetClientId() != clientID {
		t.Fatalf("the key sign-in recorded as %v %v", res, err)
	}
	if _, err := e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: signed.GetRefreshToken()}); err != nil {
		t.Fatal(err)
	}
	if n := durable.updates.Load(); n != 1 {
		t.Fatalf("a refresh committed %d durable transactions, want 1", n)
	}
}

// A refresh's spend may wait for others to share its commit (up to
// SpendWait), but not on a quiet store: a lone refresh is answered without
// waiting for its bound, and the spend is durable (a reuse is caught).
func TestLoneRefreshWaitsForNoWindow(t *testing.T) {
	// Long enough that a lone refresh on a busy machine (-race, packages
	// side by side) stays well under it, short enough to sleep through once.
	const bound = 3 * time.Second
	e := newEnv(t, func(c *Config) { c.SpendWait = bound })
	clientID, secret := e.seed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	first, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(bound + 100*time.Millisecond) // the sign-in's own writes are a bound ago
	start := time.Now()
	if _, err := e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: first.GetRefreshToken()}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= bound {
		t.Fatalf("a lone refresh took %v: its spend waited for its bound", took)
	}
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: first.GetRefreshToken()})
	wantCode(t, err, codes.PermissionDenied)
}
