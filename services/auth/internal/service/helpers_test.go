package service

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
	db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "auth.db"), kv.BoltOptions{NoSync: true, Partitions: storage.Partitions})
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

// uid is the id the store gave the user of email, as tokens write it.
func (e *env) uid(t testing.TB, email string) string {
	t.Helper()
	u, err := e.store.GetUserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(int(u.ID))
}

func register(t *testing.T, e *env, email string, k *rsa.PrivateKey) *authv1.RegisterResponse {
	t.Helper()
	res, err := e.pub.Register(context.Background(), &authv1.RegisterRequest{Email: email, Name: "Registry", Description: "key", Base64EncodedPublicKey: base64.StdEncoding.EncodeToString(spki(t, k))})
	if err != nil {
		t.Fatal(err)
	}
	return res
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
