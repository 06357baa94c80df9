package tokens

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/lestrrat-go/jwx/v2/jwa"

	"fris.dev/pkg/accesstoken"
)

func header(t *testing.T, tok string) (alg, kid string) {
	t.Helper()
	h, _, _ := strings.Cut(tok, ".")
	b, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Alg, Kid string }
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v.Alg, v.Kid
}

// TestIssuePerAlgorithm: a client's algorithm signs its access and id
// tokens with that algorithm's active key, and they read back; the refresh
// token keeps the refresh key, or the RSA key for the spec's shape.
func TestIssuePerAlgorithm(t *testing.T) {
	i, km := newIssuer(t)
	ctx := context.Background()
	for _, alg := range []jwa.SignatureAlgorithm{jwa.ES256, jwa.EdDSA, ""} {
		for _, rsaRefresh := range []bool{false, true} {
			set, err := i.Issue(Subject{UserID: 7, ClientID: "c", Scopes: []string{"openid"}, Alg: alg, RSARefresh: rsaRefresh})
			if err != nil {
				t.Fatal(err)
			}
			want := km.SignerFor(alg)
			for _, tok := range []string{set.Access, set.ID} {
				if a, k := header(t, tok); a != want.Alg.String() || k != want.KID {
					t.Fatalf("%q: header %s %s, want %s %s", alg, a, k, want.Alg, want.KID)
				}
			}
			refreshKID := km.RefreshSigner().KID
			if rsaRefresh {
				refreshKID = km.Signer().KID
			}
			if _, k := header(t, set.Refresh); k != refreshKID {
				t.Fatalf("%q rsaRefresh=%v: refresh kid %s, want %s", alg, rsaRefresh, k, refreshKID)
			}
			for tok, typ := range map[string]string{set.Access: accesstoken.Type, set.ID: TypeID, set.Refresh: TypeRefresh} {
				if _, err := i.Read(ctx, tok, typ); err != nil {
					t.Fatalf("%q: %s does not read back: %v", alg, typ, err)
				}
			}
		}
	}
	c, err := i.IssueClient("m", nil, 0, jwa.ES256)
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := header(t, c.Access); a != "ES256" {
		t.Fatalf("client_credentials token of an ES256 client: %s", a)
	}
}

// TestBenchNull: the benchmark's stub signs the access and id tokens of
// its one client only, with a kid no reader knows, so auth itself refuses
// them; the refresh token stays the refresh key's, so the chain goes on.
func TestBenchNull(t *testing.T) {
	i, km := newIssuer(t)
	ctx := context.Background()
	i.SetBenchNull("bench-null")
	set, err := i.Issue(Subject{UserID: 7, ClientID: "bench-null", Scopes: []string{"openid"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{set.Access, set.ID} {
		if a, k := header(t, tok); a != "HS256" || k != BenchNullKID {
			t.Fatalf("stub token header %s %s", a, k)
		}
		if _, err := i.Read(ctx, tok, ""); !errors.Is(err, ErrMalformed) {
			t.Fatalf("a stub token was read: %v", err)
		}
	}
	if _, k := header(t, set.Refresh); k != km.RefreshSigner().KID {
		t.Fatalf("stub refresh token kid %s", k)
	}
	if _, err := i.Read(ctx, set.Refresh, TypeRefresh); err != nil {
		t.Fatal(err)
	}
	other, err := i.Issue(Subject{UserID: 7, ClientID: "other", Scopes: []string{"openid"}})
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := header(t, other.Access); a != "RS256" {
		t.Fatalf("another client's token: %s", a)
	}
}
