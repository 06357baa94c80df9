package tokens

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"

	"fris.dev/pkg/accesstoken"
	"fris.dev/pkg/kv"
	"fris.dev/services/auth/internal/envelope"
	"fris.dev/services/auth/internal/keys"
	"fris.dev/services/auth/internal/storage"
)

const iss = "http://fris.test"

func newIssuer(t testing.TB) (*Issuer, *keys.Manager) {
	t.Helper()
	db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "auth.db"), kv.BoltOptions{NoSync: true, Partitions: storage.Partitions})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	km, err := keys.New(context.Background(), storage.New(db, testSealer(t)), keys.Options{Bits: 2048, Alg: jwa.RS256, RotateEvery: time.Hour, PublishFor: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return New(km, iss, Lifetimes{Access: time.Hour, ID: time.Hour, Refresh: 24 * time.Hour, Skew: 30 * time.Second}), km
}

func TestIssueAndRead(t *testing.T) {
	i, _ := newIssuer(t)
	ctx := context.Background()
	set, err := i.Issue(Subject{UserID: 7, ClientID: "c", Email: "a@b.c", Scopes: []string{"openid", "mdr:x"}})
	if err != nil {
		t.Fatal(err)
	}
	for tok, typ := range map[string]string{set.Access: accesstoken.Type, set.ID: TypeID, set.Refresh: TypeRefresh} {
		got, err := i.Read(ctx, tok, typ)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		// No nonce was sent: the id token carries none (OpenID clients
		// refuse one they did not send); the others a random one.
		if got.UserID() != 7 || got.ClientID() != "c" || (got.Nonce == "") != (typ == TypeID) || got.ID == "" {
			t.Fatalf("%s claims: %+v", typ, got)
		}
		// Every token is refused as another type.
		for _, other := range []string{accesstoken.Type, TypeID, TypeRefresh} {
			if other != typ {
				if _, err := i.Read(ctx, tok, other); !errors.Is(err, ErrInvalid) {
					t.Fatalf("%s read as %s: %v", typ, other, err)
				}
			}
		}
	}
	a, _ := i.Read(ctx, set.Access, accesstoken.Type)
	if sc := a.Scope; strings.Join(sc, " ") != "openid mdr:x" {
		t.Fatalf("scopes = %v", sc)
	}
	if set.RefreshJTI == "" || time.Until(set.RefreshExpires) < 23*time.Hour {
		t.Fatalf("refresh record: %q %v", set.RefreshJTI, set.RefreshExpires)
	}
}

// forge signs claims with a header and key of the attacker's choosing.
func forge(t *testing.T, alg jwa.SignatureAlgorithm, key any, kid string, mutate func(jwt.Token)) string {
	t.Helper()
	tok := jwt.New()
	now := time.Now()
	for k, v := range map[string]any{"iss": iss, "sub": "1", "aud": "c", "exp": now.Add(time.Hour), "nbf": now.Add(-time.Minute), "iat": now, "type": accesstoken.Type} {
		_ = tok.Set(k, v)
	}
	if mutate != nil {
		mutate(tok)
	}
	hdr := jws.NewHeaders()
	_ = hdr.Set(jws.KeyIDKey, kid)
	b, err := jwt.Sign(tok, jwt.WithKey(alg, key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadRefusesAttacks(t *testing.T) {
	i, km := newIssuer(t)
	ctx := context.Background()
	sg := km.Signer()
	priv := sg.Key.(*rsa.PrivateKey)
	// The public key's DER, as an attacker would use it as an HMAC secret.
	pubDER, _ := x509.MarshalPKIXPublicKey(&priv.PublicKey)

	foreignRaw, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	foreign, _ := jwk.FromRaw(foreignRaw)
	valid := forge(t, jwa.RS256, priv, sg.KID, nil)
	if _, err := i.Read(ctx, valid, accesstoken.Type); err != nil {
		t.Fatalf("control token refused: %v", err)
	}
	parts := strings.Split(valid, ".")
	noneHeader := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"` + sg.KID + `"}`))
	for name, tc := range map[string]struct {
		tok  string
		want error
	}{
		"alg none":              {noneHeader + "." + parts[1] + ".", ErrMalformed},
		"HS256 with public key": {forge(t, jwa.HS256, pubDER, sg.KID, nil), ErrMalformed},
		"foreign key, its kid":  {forge(t, jwa.RS256, foreign, "nope", nil), ErrMalformed},
		"foreign key, our kid":  {forge(t, jwa.RS256, foreign, sg.KID, nil), ErrMalformed},
		"foreign key, no kid":   {forge(t, jwa.RS256, foreign, "", nil), ErrMalformed},
		"tampered payload":      {parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"2","type":"ACCESS_TOKEN"}`)) + "." + parts[2], ErrMalformed},
		"expired":               {forge(t, jwa.RS256, priv, sg.KID, func(tk jwt.Token) { _ = tk.Set("exp", time.Now().Add(-time.Hour)) }), ErrInvalid},
		"not yet valid":         {forge(t, jwa.RS256, priv, sg.KID, func(tk jwt.Token) { _ = tk.Set("nbf", time.Now().Add(time.Hour)) }), ErrInvalid},
		"foreign issuer":        {forge(t, jwa.RS256, priv, sg.KID, func(tk jwt.Token) { _ = tk.Set("iss", "http://evil") }), ErrInvalid},
		"no type":               {forge(t, jwa.RS256, priv, sg.KID, func(tk jwt.Token) { _ = tk.Remove("type") }), ErrInvalid},
		"empty":                 {"", ErrMalformed},
		"three dots of nothing": {"..", ErrMalformed},
	} {
		if _, err := i.Read(ctx, tc.tok, accesstoken.Type); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", name, err, tc.want)
		}
	}
}

func FuzzRead(f *testing.F) {
	i, km := newIssuer(f)
	set, err := i.Issue(Subject{UserID: 1, ClientID: "c"})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(set.Access)
	f.Add(set.Refresh)
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.")
	f.Add(strings.Replace(set.Access, ".", "..", 1))
	f.Add("a.b.c")
	ctx := context.Background()
	kid := km.Signer().KID
	f.Fuzz(func(t *testing.T, tok string) {
		got, err := i.Read(ctx, tok, accesstoken.Type)
		if err == nil && tok != set.Access {
			// Anything else accepted must at least carry our key id and
			// verify: a fuzzer cannot forge an RSA signature.
			t.Fatalf("accepted a token it did not issue: %q (kid %s, sub %s)", tok, kid, got.Subject)
		}
	})
}

// TestTokenShape pins the wire form: the JOSE header, the claims of each
// token type, and that a standard JWT library verifies them against the
// published key set.
func TestTokenShape(t *testing.T) {
	i, km := newIssuer(t)
	set, err := i.Issue(Subject{UserID: 7, ClientID: "c", Email: "a@b.c", Name: "Ada", Scopes: []string{"openid"}, Nonce: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	decode := func(t *testing.T, part string) map[string]any {
		t.Helper()
		b, err := base64.RawURLEncoding.DecodeString(part)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	base := []string{"aud", "exp", "iat", "iss", "jti", "nbf", "nonce", "sub", "type"}
	for _, tc := range []struct {
		tok, typ string
		extra    []string
		life     float64
	}{
		{set.Access, accesstoken.Type, []string{"scope", "client_id"}, 3600},
		{set.ID, TypeID, []string{"email", "email_verified", "name"}, 3600},
		{set.Refresh, TypeRefresh, nil, 24 * 3600},
	} {
		parts := strings.Split(tc.tok, ".")
		if len(parts) != 3 {
			t.Fatalf("%s: not a compact JWS", tc.typ)
		}
		hdr := decode(t, parts[0])
		wantHdr := map[string]any{"alg": "RS256", "kid": km.Signer().KID, "typ": "JWT"}
		if tc.typ == TypeRefresh {
			wantHdr = map[string]any{"alg": "HS256", "kid": km.RefreshSigner().KID, "typ": "JWT"}
		}
		if !reflect.DeepEqual(hdr, wantHdr) {
			t.Errorf("%s header = %v, want %v", tc.typ, hdr, wantHdr)
		}
		c := decode(t, parts[1])
		var keys []string
		for k := range c {
			keys = append(keys, k)
		}
		want := append(append([]string{}, base...), tc.extra...)
		slices.Sort(keys)
		slices.Sort(want)
		if !slices.Equal(keys, want) {
			t.Errorf("%s claims = %v, want %v", tc.typ, keys, want)
		}
		if c["type"] != tc.typ || c["sub"] != "7" || c["iss"] != iss || c["nonce"] != "n1" {
			t.Errorf("%s claims: %v", tc.typ, c)
		}
		if aud, ok := c["aud"].([]any); !ok || len(aud) != 1 || aud[0] != "c" {
			t.Errorf("%s aud = %v, want [c]", tc.typ, c["aud"])
		}
		exp, iat, nbf := c["exp"].(float64), c["iat"].(float64), c["nbf"].(float64)
		if exp-iat != tc.life || iat-nbf != 30 || exp != float64(int64(exp)) {
			t.Errorf("%s dates: iat %v nbf %v exp %v", tc.typ, iat, nbf, exp)
		}
		// Any standard JWT library verifies the access and id tokens with
		// the JWK Set; the refresh key is not in it.
		_, err := jwt.Parse([]byte(tc.tok), jwt.WithKeySet(km.Public()), jwt.WithIssuer(iss))
		if tc.typ != TypeRefresh && err != nil {
			t.Errorf("%s does not verify with jwx against the published keys: %v", tc.typ, err)
		}
		if tc.typ == TypeRefresh && err == nil {
			t.Errorf("the refresh token verifies against the published keys")
		}
	}
	id := decode(t, strings.Split(set.ID, ".")[1])
	if id["email"] != "a@b.c" || id["email_verified"] != false || id["name"] != "Ada" {
		t.Errorf("id token claims: %v", id)
	}
	// RFC 9068: one space-separated string (the Samply auth client fails on
	// an array).
	if sc := decode(t, strings.Split(set.Access, ".")[1])["scope"]; sc != "openid" {
		t.Errorf("scope = %#v, want the string \"openid\"", sc)
	}
}

func TestScopeClaim(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		want       accesstoken.Scope
		wantErr    bool
	}{
		{"string", `"openid mdr:a"`, accesstoken.Scope{"openid", "mdr:a"}, false},
		{"extra spaces", `"  openid   mdr:a "`, accesstoken.Scope{"openid", "mdr:a"}, false},
		{"empty string", `""`, accesstoken.Scope{}, false},
		// Tokens issued before the claim became a string.
		{"array", `["openid","mdr:a"]`, accesstoken.Scope{"openid", "mdr:a"}, false},
		{"number", `7`, nil, true},
		{"array of numbers", `[7]`, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got accesstoken.Scope
			err := json.Unmarshal([]byte(tc.json), &got)
			if (err != nil) != tc.wantErr || (!tc.wantErr && strings.Join(got, " ") != strings.Join(tc.want, " ")) {
				t.Fatalf("got %q, %v", got, err)
			}
		})
	}
	b, err := json.Marshal(accesstoken.Scope{"openid", "mdr:a"})
	if err != nil || string(b) != `"openid mdr:a"` {
		t.Fatalf("marshal = %s, %v", b, err)
	}
}

func TestIssueClient(t *testing.T) {
	i, km := newIssuer(t)
	set, err := i.IssueClient("42", []string{"mdr:x"}, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if set.ID != "" || set.Refresh != "" || set.ExpiresIn != time.Hour {
		t.Fatalf("set = %+v", set)
	}
	c, err := i.Read(context.Background(), set.Access, accesstoken.Type)
	if err != nil {
		t.Fatal(err)
	}
	// A numeric client ID must never read as user 42.
	if !c.IsClient() || c.Subject != "client:42" || c.UserID() != 0 || c.ClientID() != "42" || c.Client != "42" || strings.Join(c.Scope, " ") != "mdr:x" {
		t.Fatalf("claims = %+v", c)
	}
	if _, err := jwt.Parse([]byte(set.Access), jwt.WithKeySet(km.Public()), jwt.WithIssuer(iss)); err != nil {
		t.Fatal(err)
	}
	user, _ := i.Issue(Subject{UserID: 42, ClientID: "42"})
	if u, _ := i.Read(context.Background(), user.Access, accesstoken.Type); u.IsClient() {
		t.Fatal("a user's token reads as a client's")
	}
}

// Without a client (a signed code sent without client_id) the tokens name
// the issuer as their audience, carry no client_id, and read as issued to
// no client.
func TestIssueWithoutClient(t *testing.T) {
	i, _ := newIssuer(t)
	set, err := i.Issue(Subject{UserID: 7, Scopes: []string{"openid"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{set.Access, set.ID, set.Refresh} {
		b, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
		var c struct {
			Iss    string   `json:"iss"`
			Aud    []string `json:"aud"`
			Client *string  `json:"client_id"`
		}
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		if len(c.Aud) != 1 || c.Aud[0] != c.Iss || c.Iss == "" || c.Client != nil {
			t.Fatalf("claims %s: want aud [iss] and no client_id", b)
		}
	}
	for _, typ := range []struct{ tok, typ string }{{set.Access, accesstoken.Type}, {set.Refresh, TypeRefresh}} {
		c, err := i.Read(context.Background(), typ.tok, typ.typ)
		if err != nil {
			t.Fatal(err)
		}
		if c.ClientID() != "" {
			t.Fatalf("%s reads as issued to client %q", typ.typ, c.ClientID())
		}
	}
}

// BenchmarkIssue is one token response's signing work; compare it with
// BenchmarkRawSign times three to see what the token encoding adds.
func BenchmarkIssue(b *testing.B) {
	i, _ := newIssuer(b)
	s := Subject{UserID: 7, ClientID: "c", Email: "a@b.c", Name: "Ada", Scopes: []string{"openid", "mdr:x"}}
	for b.Loop() {
		if _, err := i.Issue(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRawSign(b *testing.B) {
	_, km := newIssuer(b)
	d := sha256.Sum256([]byte("x"))
	for b.Loop() {
		if _, err := rsa.SignPKCS1v15(nil, km.Signer().Key.(*rsa.PrivateKey), crypto.SHA256, d[:]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRead(b *testing.B) {
	i, _ := newIssuer(b)
	set, err := i.Issue(Subject{UserID: 7, ClientID: "c", Scopes: []string{"openid"}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		if _, err := i.Read(ctx, set.Refresh, TypeRefresh); err != nil {
			b.Fatal(err)
		}
	}
}

// The refresh record is written from the plan while the tokens are signed:
// the signed refresh token must carry exactly the planned jti and expiry.
func TestPlanFixesTheRefreshTokenBeforeSigning(t *testing.T) {
	i, _ := newIssuer(t)
	p := i.Plan(Subject{UserID: 7, ClientID: "c", Scopes: []string{"openid"}})
	if p.RefreshJTI == "" || !p.RefreshExpires.After(time.Now().Add(23*time.Hour)) {
		t.Fatalf("plan: jti %q, expires %v", p.RefreshJTI, p.RefreshExpires)
	}
	set, err := p.Sign()
	if err != nil {
		t.Fatal(err)
	}
	got, err := i.Read(context.Background(), set.Refresh, TypeRefresh)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != p.RefreshJTI || !got.Expiration().Equal(p.RefreshExpires) || set.RefreshJTI != p.RefreshJTI {
		t.Fatalf("signed refresh token: jti %q expires %v; planned %q %v", got.ID, got.Expiration(), p.RefreshJTI, p.RefreshExpires)
	}
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

// TestIssuedAfterARevocation: a token issued in the second of a revocation
// carries the revoked-before as its iat (so the revocation does not catch
// it) and still reads; the access token carries the chain; Read with no
// wanted type takes any of the provider's.
func TestIssuedAfterARevocation(t *testing.T) {
	i, _ := newIssuer(t)
	ctx := context.Background()
	later := time.Now().Unix() + 1
	set, err := i.Issue(Subject{UserID: 7, ClientID: "c", Session: "chain", RevokedBefore: later})
	if err != nil {
		t.Fatal(err)
	}
	for tok, typ := range map[string]string{set.Access: accesstoken.Type, set.ID: TypeID, set.Refresh: TypeRefresh} {
		got, err := i.Read(ctx, tok, "")
		if err != nil || string(got.Type) != typ || int64(got.IssuedAt) != later {
			t.Fatalf("%s: %+v, %v", typ, got, err)
		}
		if (got.Session == "chain") != (typ != TypeID) {
			t.Fatalf("%s sid = %q", typ, got.Session)
		}
	}
	old, err := i.Issue(Subject{UserID: 7, RevokedBefore: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := i.Read(ctx, old.Access, accesstoken.Type); got == nil || int64(got.IssuedAt) > time.Now().Unix() {
		t.Fatalf("a revocation in the past moved iat: %+v", got)
	}
	c, err := i.IssueClient("m", nil, later, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := i.Read(ctx, c.Access, accesstoken.Type); got == nil || int64(got.IssuedAt) != later {
		t.Fatalf("client token: %+v", got)
	}
}
