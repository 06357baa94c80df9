package service

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwt"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/grpctest"
	"fris.dev/pkg/identity"
	"fris.dev/pkg/kv"
	"fris.dev/pkg/password"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/envelope"
	"fris.dev/services/auth/internal/keys"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

const issuer = "http://fris.test"

type env struct {
	pub   authv1.AuthServiceClient
	adm   authv1.AuthAdminClient
	store storage.Store
	svc   *Service
	db    kv.Store
}

// userKey is one RSA key pair shared by the tests: generating keys is slow.
var userKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

func newEnv(t testing.TB, mut ...func(*Config)) *env {
	t.Helper()
	ctx := context.Background()
	db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "auth.db"), kv.BoltOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	store := storage.New(db, testSealer(t))
	log := slog.New(slog.DiscardHandler)
	km, err := keys.New(ctx, store, keys.Options{Bits: 2048, Alg: jwa.RS256, RotateEvery: time.Hour, PublishFor: 2 * time.Hour, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Issuer: issuer, AllowRegister: true, MinKeyBits: 2048, SignRequestTTL: time.Minute, AuthCodeTTL: time.Minute}
	for _, m := range mut {
		m(&cfg)
	}
	iss := tokens.New(km, issuer, tokens.Lifetimes{Access: time.Hour, ID: time.Hour, Refresh: 24 * time.Hour, Skew: 30 * time.Second})
	svc := New(cfg, store, km, iss, password.New(password.Params{Time: 1, Memory: 1024, Threads: 1}, time.Minute), log)

	cc := grpctest.Serve(t, func(s *grpc.Server) {
		authv1.RegisterAuthServiceServer(s, Public{Service: svc})
		authv1.RegisterAuthAdminServer(s, Admin{Service: svc})
	})
	return &env{pub: authv1.NewAuthServiceClient(cc), adm: authv1.NewAuthAdminClient(cc), store: store, svc: svc, db: db}
}

func wantCode(t *testing.T, err error, c codes.Code) {
	t.Helper()
	if status.Code(err) != c {
		t.Fatalf("got %v, want %v", err, c)
	}
}

// seed creates a client (with secret) and a user (with password).
func (e *env) seed(t testing.TB) (clientID, secret string) {
	t.Helper()
	ctx := context.Background()
	res, err := e.adm.CreateClient(ctx, &authv1.CreateClientRequest{Name: "Demo", RedirectUrl: "https://app.example/cb, https://app.example/cb2", Type: "MDR", ClientId: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.adm.CreateUser(ctx, &authv1.CreateUserRequest{Email: "ada@example.org", RealName: "Ada Lovelace", Password: "correct horse", Scopes: []string{"mdr:secret", identity.ScopeUserSearch}}); err != nil {
		t.Fatal(err)
	}
	return res.GetClient().GetClient().GetClientId(), res.GetSecret()
}

func (e *env) login(t *testing.T, clientID string, ar *authv1.AuthorizeRequest) string {
	t.Helper()
	if ar == nil {
		ar = &authv1.AuthorizeRequest{}
	}
	ar.ClientId = clientID
	res, err := e.pub.Login(context.Background(), &authv1.LoginRequest{Request: ar, Email: "ADA@example.org", Password: "correct horse"})
	if err != nil {
		t.Fatal(err)
	}
	return res.GetCode()
}

func spki(t *testing.T, k *rsa.PrivateKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func sign(t *testing.T, k *rsa.PrivateKey, code string) string {
	sum := sha512.Sum512([]byte(code))
	sig, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA512, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(sig)
}

func claims(t *testing.T, tok string) jwt.Token {
	t.Helper()
	p, err := jwt.ParseInsecure([]byte(tok))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func bearer(tok string) context.Context {
	return metadata.NewOutgoingContext(context.Background(), metadata.Pairs("authorization", "Bearer "+tok))
}

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
	if a.Issuer() != issuer || a.Subject() != "1" || a.Audience()[0] != clientID {
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

func toStrings(v any) []string {
	var out []string
	switch s := v.(type) {
	case []any:
		for _, x := range s {
			out = append(out, x.(string))
		}
	case []string:
		out = s
	}
	return out
}

func kidOf(t *testing.T, tok string) string {
	h, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[0])
	if err != nil {
		t.Fatal(err)
	}
	s := string(h)
	i := strings.Index(s, `"kid":"`)
	if i < 0 {
		t.Fatalf("no kid in %s", s)
	}
	s = s[i+7:]
	return s[:strings.IndexByte(s, '"')]
}

func TestPKCE(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clientID, secret := e.seed(t)
	verifier := "a-verifier-of-at-least-43-characters-long-xyz"
	sum := sha256.Sum256([]byte(verifier))
	ar := &authv1.AuthorizeRequest{CodeChallenge: base64.RawURLEncoding.EncodeToString(sum[:]), CodeChallengeMethod: "S256", RedirectUri: "https://app.example/cb2"}
	code := e.login(t, clientID, ar)
	_, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: code, ClientId: clientID, ClientSecret: secret, CodeVerifier: "wrong"})
	wantCode(t, err, codes.InvalidArgument)
	code = e.login(t, clientID, ar)
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{Code: code, ClientId: clientID, ClientSecret: secret, CodeVerifier: verifier, RedirectUri: "https://app.example/cb2"})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []*authv1.AuthorizeRequest{
		{CodeChallengeMethod: "plain", CodeChallenge: "x"},
		{CodeChallengeMethod: "S256"},
		{CodeChallenge: "not-base64-of-32-bytes"},
		{RedirectUri: "https://evil.example/cb"},
	} {
		bad.ClientId = clientID
		_, err := e.pub.Authorize(ctx, bad)
		wantCode(t, err, codes.InvalidArgument)
	}
	_, err = e.pub.Authorize(ctx, &authv1.AuthorizeRequest{ClientId: "nope"})
	wantCode(t, err, codes.NotFound)
	res, err := e.pub.Authorize(ctx, &authv1.AuthorizeRequest{ClientId: clientID})
	if err != nil || res.GetRedirectUri() != "https://app.example/cb" || res.GetClientName() != "Demo" {
		t.Fatalf("Authorize = %v %v", res, err)
	}
}

func TestLoginGivesNoHint(t *testing.T) {
	e := newEnv(t)
	clientID, _ := e.seed(t)
	ctx := context.Background()
	for _, tc := range []struct{ email, pw string }{{"ada@example.org", "wrong password"}, {"nobody@example.org", "correct horse"}, {"", ""}} {
		_, err := e.pub.Login(ctx, &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: tc.email, Password: tc.pw})
		wantCode(t, err, codes.Unauthenticated)
		if st := status.Convert(err); st.Message() != "email or password is wrong" {
			t.Fatalf("%s: message %q gives a hint", tc.email, st.Message())
		}
	}
}

func register(t *testing.T, e *env, email string, k *rsa.PrivateKey) *authv1.RegisterResponse {
	t.Helper()
	res, err := e.pub.Register(context.Background(), &authv1.RegisterRequest{Email: email, Name: "Registry", Description: "key", Base64EncodedPublicKey: base64.StdEncoding.EncodeToString(spki(t, k))})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestSignatureFlow(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clientID, _ := e.seed(t)
	k := userKey()
	reg := register(t, e, "registry@example.org", k)
	if reg.GetUserId() != 2 || reg.GetKeyId() != 1 {
		t.Fatalf("register = %v", reg)
	}
	// By key id, by upper-case hash, by the key_id alias.
	sum := sha512.Sum512(spki(t, k))
	for _, req := range []*authv1.SignRequestRequest{
		{KeyId: reg.GetKeyId()},
		{Sha512Hash: strings.ToUpper(hex.EncodeToString(sum[:]))},
		{KeyIdAlias: reg.GetKeyId()},
	} {
		sr, err := e.pub.SignRequest(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if sr.GetAlgoritm() != "SHA512withRSA" || len(sr.GetCode()) < 40 || int64(sr.GetExpirationDate()) <= time.Now().Unix() {
			t.Fatalf("sign request = %v", sr)
		}
		res, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: sr.GetCode(), ClientId: clientID, Signature: sign(t, k, sr.GetCode())})
		if err != nil {
			t.Fatal(err)
		}
		if claims(t, res.GetAccessToken()).Subject() != "2" {
			t.Fatal("wrong subject")
		}
		// Single use.
		_, err = e.pub.Token(ctx, &authv1.TokenRequest{Code: sr.GetCode(), ClientId: clientID, Signature: sign(t, k, sr.GetCode())})
		wantCode(t, err, codes.NotFound)
	}
	_, err := e.pub.SignRequest(ctx, &authv1.SignRequestRequest{KeyId: 99})
	wantCode(t, err, codes.NotFound)
	_, err = e.pub.SignRequest(ctx, &authv1.SignRequestRequest{Sha512Hash: strings.Repeat("0", 128)})
	wantCode(t, err, codes.NotFound)
	_, err = e.pub.SignRequest(ctx, &authv1.SignRequestRequest{})
	wantCode(t, err, codes.InvalidArgument)

	// URL-alphabet signature with whitespace is accepted.
	sr, _ := e.pub.SignRequest(ctx, &authv1.SignRequestRequest{KeyId: reg.GetKeyId()})
	sig := sign(t, k, sr.GetCode())
	sig = strings.NewReplacer("+", "-", "/", "_").Replace(sig[:40]) + "\n " + sig[40:]
	if _, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: sr.GetCode(), ClientId: clientID, Signature: sig}); err != nil {
		t.Fatalf("tolerant base64: %v", err)
	}
	// A signature by another key: 401, and the code is spent.
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	sr, _ = e.pub.SignRequest(ctx, &authv1.SignRequestRequest{KeyId: reg.GetKeyId()})
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{Code: sr.GetCode(), ClientId: clientID, Signature: sign(t, other, sr.GetCode())})
	wantCode(t, err, codes.Unauthenticated)
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{Code: sr.GetCode(), ClientId: clientID, Signature: sign(t, k, sr.GetCode())})
	wantCode(t, err, codes.NotFound)
	// A disabled user: 401.
	sr, _ = e.pub.SignRequest(ctx, &authv1.SignRequestRequest{KeyId: reg.GetKeyId()})
	if _, err := e.adm.SetUserDisabled(ctx, &authv1.SetUserDisabledRequest{Email: "registry@example.org", Disabled: true}); err != nil {
		t.Fatal(err)
	}
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{Code: sr.GetCode(), ClientId: clientID, Signature: sign(t, k, sr.GetCode())})
	wantCode(t, err, codes.Unauthenticated)
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

func TestBearerEndpoints(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clientID, secret := e.seed(t)
	res, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	info, err := e.pub.GetTokenInfo(bearer(res.GetAccessToken()), &authv1.GetTokenInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.GetSubject() != "1" || info.GetIssuer() != issuer || info.GetNonce() == "" || info.GetNotBeofre() == 0 ||
		int64(info.GetExpirationDate()) <= time.Now().Unix() || !contains(info.GetScope(), "openid") {
		t.Fatalf("tokeninfo = %v", info)
	}
	ui, err := e.pub.GetUserInfo(bearer(res.GetAccessToken()), &authv1.GetUserInfoRequest{})
	if err != nil || ui.GetEmail() != "ada@example.org" || ui.GetRealName() != "Ada Lovelace" || ui.GetLocality() == nil {
		t.Fatalf("userinfo = %v %v", ui, err)
	}
	register(t, e, "registry@example.org", userKey())
	found, err := e.pub.SearchUsers(bearer(res.GetAccessToken()), &authv1.SearchUsersRequest{Query: "LOVE"})
	if err != nil || len(found.GetUsers()) != 1 || found.GetUsers()[0].GetEmail() != "ada@example.org" {
		t.Fatalf("search = %v %v", found, err)
	}
	found, _ = e.pub.SearchUsers(bearer(res.GetAccessToken()), &authv1.SearchUsersRequest{Query: "example.org"})
	if len(found.GetUsers()) != 2 {
		t.Fatalf("search by email = %v", found)
	}
	_, err = e.pub.SearchUsers(bearer(res.GetAccessToken()), &authv1.SearchUsersRequest{})
	wantCode(t, err, codes.InvalidArgument)

	for _, tok := range []string{"", "garbage", res.GetIdToken(), res.GetRefreshToken()} {
		c := ctx
		if tok != "" {
			c = bearer(tok)
		}
		_, err := e.pub.GetTokenInfo(c, &authv1.GetTokenInfoRequest{})
		wantCode(t, err, codes.PermissionDenied)
		_, err = e.pub.GetUserInfo(c, &authv1.GetUserInfoRequest{})
		wantCode(t, err, codes.PermissionDenied)
		_, err = e.pub.SearchUsers(c, &authv1.SearchUsersRequest{Query: "a"})
		wantCode(t, err, codes.PermissionDenied)
	}
}

func TestRegisterErrors(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	k := userKey()
	register(t, e, "one@example.org", k)
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	for _, tc := range []struct {
		req  *authv1.RegisterRequest
		code codes.Code
	}{
		{&authv1.RegisterRequest{}, codes.InvalidArgument},
		{&authv1.RegisterRequest{Email: "two@example.org", Base64EncodedPublicKey: "not base64!"}, codes.InvalidArgument},
		{&authv1.RegisterRequest{Email: "two@example.org", Base64EncodedPublicKey: base64.StdEncoding.EncodeToString([]byte("not der"))}, codes.InvalidArgument},
		{&authv1.RegisterRequest{Email: "two@example.org", Base64EncodedPublicKey: base64.StdEncoding.EncodeToString(spki(t, small))}, codes.InvalidArgument},
		{&authv1.RegisterRequest{Email: "Not An Email", Base64EncodedPublicKey: base64.StdEncoding.EncodeToString(spki(t, k))}, codes.InvalidArgument},
		{&authv1.RegisterRequest{Email: "ONE@example.org", Base64EncodedPublicKey: base64.StdEncoding.EncodeToString(spki(t, k))}, codes.AlreadyExists},
	} {
		_, err := e.pub.Register(ctx, tc.req)
		wantCode(t, err, tc.code)
	}
	off := newEnv(t, func(c *Config) { c.AllowRegister = false })
	_, err := off.pub.Register(ctx, &authv1.RegisterRequest{Email: "x@example.org", Base64EncodedPublicKey: base64.StdEncoding.EncodeToString(spki(t, k))})
	wantCode(t, err, codes.Unimplemented)
}

func TestKeyRotationKeepsOldTokensValid(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clientID, secret := e.seed(t)
	before, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	rot, err := e.adm.RotateKeys(ctx, &authv1.RotateKeysRequest{})
	if err != nil {
		t.Fatal(err)
	}
	after, err := e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: before.GetRefreshToken()})
	if err != nil {
		t.Fatalf("refresh token signed by the retired key: %v", err)
	}
	if kidOf(t, after.GetAccessToken()) != rot.GetKey().GetKid() || kidOf(t, before.GetAccessToken()) == rot.GetKey().GetKid() {
		t.Fatal("new tokens are not signed by the new key")
	}
	if _, err := e.pub.GetTokenInfo(bearer(before.GetAccessToken()), &authv1.GetTokenInfoRequest{}); err != nil {
		t.Fatalf("access token of the retired key: %v", err)
	}
	certs, _ := e.pub.ListCerts(ctx, &authv1.ListCertsRequest{})
	jwks, _ := e.pub.GetJWKS(ctx, &authv1.GetJWKSRequest{})
	if len(certs.GetKeys()) != 2 || len(jwks.GetKeys()) != 2 {
		t.Fatalf("published keys: certs %d jwks %d", len(certs.GetKeys()), len(jwks.GetKeys()))
	}
	for _, c := range certs.GetKeys() {
		der, err := base64.RawURLEncoding.DecodeString(c.GetDerFormat())
		if err != nil {
			t.Fatal(err)
		}
		std, _ := base64.StdEncoding.DecodeString(c.GetBase64DerFormat())
		if string(der) != string(std) || c.GetKeyType() != "RSA" || c.GetUse() != "sig" {
			t.Fatalf("cert %v", c)
		}
		if _, err := x509.ParsePKIXPublicKey(der); err != nil {
			t.Fatal(err)
		}
	}
	ks, _ := e.adm.ListKeys(ctx, &authv1.ListKeysRequest{})
	if len(ks.GetKeys()) != 2 || ks.GetKeys()[0].GetActive() || !ks.GetKeys()[1].GetActive() || ks.GetKeys()[0].GetPublishUntil() == 0 {
		t.Fatalf("keys = %v", ks)
	}
}

func TestAdminValidation(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, req := range []*authv1.CreateClientRequest{
		{Name: "", RedirectUrl: "https://a/cb"},
		{Name: "x", RedirectUrl: "ftp://a/cb"},
		{Name: "x", RedirectUrl: "https://a/cb#frag"},
		{Name: "x", Type: "OTHER"},
		{Name: "x", Secret: "short"},
		{Name: "x", ClientId: "with space"},
		{Name: "x", ClientId: strings.Repeat("c", 129)},
		{Name: "x", ClientId: strings.Repeat("c", 2000)},
	} {
		_, err := e.adm.CreateClient(ctx, req)
		wantCode(t, err, codes.InvalidArgument)
	}
	res, err := e.adm.CreateClient(ctx, &authv1.CreateClientRequest{Name: "x", RedirectUrl: "http://localhost:3000/cb"})
	if err != nil || len(res.GetSecret()) < 32 || res.GetClient().GetClient().GetType() != "UNDEFINED" {
		t.Fatalf("generated client = %v %v", res, err)
	}
	stored, _ := e.store.GetClient(ctx, res.GetClient().GetClient().GetClientId())
	if strings.Contains(stored.SecretHash, res.GetSecret()) || !strings.HasPrefix(stored.SecretHash, "$argon2id$") {
		t.Fatal("client secret not stored hashed")
	}
	_, err = e.adm.CreateUser(ctx, &authv1.CreateUserRequest{Email: "a@example.org", Password: "short"})
	wantCode(t, err, codes.InvalidArgument)
	_, err = e.adm.SetPassword(ctx, &authv1.SetPasswordRequest{Email: "nobody@example.org", Password: "long enough"})
	wantCode(t, err, codes.NotFound)
}

// The discovery document names the paths under the prefix the gateway says
// it serves group A at, and /oauth2 when it says nothing usable.
func TestDiscoveryFollowsTheGatewaysPrefix(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		md   []string
		want string
	}{
		{nil, "/oauth2"},
		{[]string{identity.KeyAuthPrefix, "/auth"}, "/auth"},
		{[]string{identity.KeyAuthPrefix, "/idp/v2"}, "/idp/v2"},
		{[]string{identity.KeyAuthPrefix, "auth"}, "/oauth2"},
		{[]string{identity.KeyAuthPrefix, "/a b"}, "/oauth2"},
		{[]string{identity.KeyAuthPrefix, "/"}, "/oauth2"},
		{[]string{identity.KeyAuthPrefix, "/x", identity.KeyAuthPrefix, "/y"}, "/oauth2"},
	} {
		ctx := metadata.AppendToOutgoingContext(context.Background(), tc.md...)
		d, err := e.pub.GetDiscovery(ctx, &authv1.GetDiscoveryRequest{})
		if err != nil {
			t.Fatal(err)
		}
		at := issuer + tc.want
		if d.GetIssuer() != issuer || d.GetAuthorizationEndpoint() != at+"/authorize" || d.GetTokenEndpoint() != at+"/token" ||
			d.GetJwksUri() != at+"/jwks" || d.GetUserinfoEndpoint() != at+"/userinfo" {
			t.Errorf("metadata %q: discovery = %v, want endpoints under %s", tc.md, d, at)
		}
	}
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
// durable store (their codes live in the volatile one); only a refresh
// commits, once.
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
	durable.updates.Store(0)
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
	if n := durable.updates.Load(); n != 0 {
		t.Fatalf("two sign-ins committed %d durable transactions, want 0", n)
	}
	if n := codes.updates.Load(); n != 4 {
		t.Fatalf("two sign-ins committed %d code transactions, want 4 (put and take each)", n)
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
	const bound = 500 * time.Millisecond
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

// testSealer seals signing keys under a fixed secret: tests here are not
// about encryption at rest (see envelope and storagetest).
func testSealer(t testing.TB) storage.Sealer {
	t.Helper()
	b, err := envelope.New([][]byte{make([]byte, envelope.SecretSize)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
