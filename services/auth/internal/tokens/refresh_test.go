package tokens

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwt"

	"fris.dev/pkg/accesstoken"
)

// asRefresh makes a forged token a refresh token.
func asRefresh(tk jwt.Token) { _ = tk.Set("type", TypeRefresh) }

// TestRefreshTokenHS256: an OAuth-shaped refresh token is an HS256 JWS
// under the refresh key's MAC kid, and reads back as the refresh token.
func TestRefreshTokenHS256(t *testing.T) {
	i, km := newIssuer(t)
	ctx := context.Background()
	set, err := i.Issue(Subject{UserID: 7, ClientID: "c", Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	rs := km.RefreshSigner()
	if alg, kid := header(t, set.Refresh); alg != "HS256" || kid != rs.KID || kid == rs.EdKID {
		t.Fatalf("refresh token header alg %s kid %s; want HS256 under %s", alg, kid, rs.KID)
	}
	for _, want := range []string{TypeRefresh, ""} {
		c, err := i.Read(ctx, set.Refresh, want)
		if err != nil || c.Type != TypeRefresh || c.UserID() != 7 || c.Session != "s1" || c.ID != set.RefreshJTI {
			t.Fatalf("Read(%q): %+v %v", want, c, err)
		}
	}
}

// TestRefreshTokenHS256Refusals: an HS256 token verifies only with the MAC
// key of its own kid, and only as a refresh token.
func TestRefreshTokenHS256Refusals(t *testing.T) {
	i, km := newIssuer(t)
	other, otherKeys := newIssuer(t)
	ctx := context.Background()
	rs := km.RefreshSigner()
	good := forge(t, jwa.HS256, rs.Key, rs.KID, asRefresh)
	if _, err := i.Read(ctx, good, TypeRefresh); err != nil {
		t.Fatalf("control token refused: %v", err)
	}
	random := make([]byte, 32)
	if _, err := rand.Read(random); err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(good, ".")
	flipped := []byte(parts[2])
	flipped[0] ^= 'A' ^ 'B'
	ors := otherKeys.RefreshSigner()
	for name, tok := range map[string]string{
		"wrong MAC":                          parts[0] + "." + parts[1] + "." + string(flipped),
		"another secret, our kid":            forge(t, jwa.HS256, random, rs.KID, asRefresh),
		"the MAC key under the EdDSA kid":    forge(t, jwa.HS256, rs.Key, rs.EdKID, asRefresh),
		"the MAC key under the RSA kid":      forge(t, jwa.HS256, rs.Key, km.Signer().KID, asRefresh),
		"the MAC key under an unknown kid":   forge(t, jwa.HS256, rs.Key, "nope"+".hs256", asRefresh),
		"the MAC key, HS512":                 forge(t, jwa.HS512, rs.Key, rs.KID, asRefresh),
		"an Ed25519 signature under the MAC": forge(t, jwa.EdDSA, rs.EdKey, rs.KID, asRefresh),
		"another provider's MAC, its kid":    forge(t, jwa.HS256, ors.Key, ors.KID, asRefresh),
		"another provider's MAC, our kid":    forge(t, jwa.HS256, ors.Key, rs.KID, asRefresh),
	} {
		if _, err := i.Read(ctx, tok, TypeRefresh); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: got %v, want ErrMalformed", name, err)
		}
	}
	if _, err := other.Read(ctx, good, TypeRefresh); !errors.Is(err, ErrMalformed) {
		t.Errorf("another provider read our refresh token: %v", err)
	}
	// RefreshOnly: a good MAC over an access or id token is not ours.
	for _, typ := range []string{accesstoken.Type, TypeID} {
		tok := forge(t, jwa.HS256, rs.Key, rs.KID, func(tk jwt.Token) { _ = tk.Set("type", typ) })
		for _, want := range []string{typ, ""} {
			if _, err := i.Read(ctx, tok, want); !errors.Is(err, ErrMalformed) {
				t.Errorf("an HS256 %s read as %q: %v", typ, want, err)
			}
		}
	}
}

// TestRefreshTokenOldSignatures: refresh tokens signed before the MAC (EdDSA
// with the refresh key) are still read, and so are HS256 ones of a retired
// refresh key, until the key is pruned.
func TestRefreshTokenOldSignatures(t *testing.T) {
	i, km := newIssuer(t)
	ctx := context.Background()
	rs := km.RefreshSigner()
	ed := forge(t, jwa.EdDSA, rs.EdKey, rs.EdKID, asRefresh)
	if _, err := i.Read(ctx, ed, TypeRefresh); err != nil {
		t.Fatalf("an EdDSA refresh token: %v", err)
	}
	// The refresh key's Ed25519 signature is a refresh token's only.
	if _, err := i.Read(ctx, forge(t, jwa.EdDSA, rs.EdKey, rs.EdKID, nil), ""); !errors.Is(err, ErrMalformed) {
		t.Errorf("an EdDSA access token under the refresh key: %v", err)
	}
	set, err := i.Issue(Subject{UserID: 7, ClientID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := km.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	now := km.RefreshSigner()
	if now.KID == rs.KID || string(now.Key) == string(rs.Key) {
		t.Fatal("rotation kept the MAC key")
	}
	for name, tok := range map[string]string{"EdDSA": ed, "HS256": set.Refresh} {
		if _, err := i.Read(ctx, tok, TypeRefresh); err != nil {
			t.Errorf("%s refresh token of the retired key: %v", name, err)
		}
	}
	// Past the retired key's keeping (PublishFor, an hour here) it is
	// pruned, and with it both kinds of its tokens.
	if err := km.Maintain(ctx, time.Now().Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if km.Has(rs.KID) || km.Has(rs.EdKID) {
		t.Fatal("the pruned refresh key still verifies")
	}
}

// BenchmarkRefreshToken: what a refresh costs in refresh-token crypto,
// signing the new token and reading the spent one, under the MAC and under
// the Ed25519 signature it replaced.
func BenchmarkRefreshToken(b *testing.B) {
	i, km := newIssuer(b)
	ctx := context.Background()
	rs := km.RefreshSigner()
	p := i.Plan(Subject{UserID: 7, ClientID: "c", Session: "s1"})
	for _, tc := range []struct {
		alg jwa.SignatureAlgorithm
		kid string
		key any
	}{{jwa.HS256, rs.KID, rs.Key}, {jwa.EdDSA, rs.EdKID, rs.EdKey}} {
		b.Run(tc.alg.String(), func(b *testing.B) {
			key, err := signer(tc.kid, tc.alg, tc.key)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				tok, err := sign(&p.refresh, key)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := i.Read(ctx, tok, TypeRefresh); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
