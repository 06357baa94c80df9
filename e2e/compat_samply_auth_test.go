package e2e

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The Samply auth client (auth-client 4.0.1, auth-dto 5.2.0), request for
// request: JSON bodies, the /oauth2/access_token path, the sign request by
// key hash with key_id 0, the signed code without client_id, scope read as
// a string, and every token verified with the one public key it is
// configured with (it fetches no keys). Its networks run without automatic
// key rotation.
func TestCompatSamplyAuthPrivateKeyFlow(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{AuthArgs: []string{"-key-rotation", "0"}})
	seedAuth(t, s)
	hostKey := samplyHostKey(t, s)

	// Discovery where it looks (<host>/oauth2/.well-known/...).
	_, b := s.Get(t, oauth+"/.well-known/openid-configuration", 200)
	if field(t, JSON(t, b), "issuer") != Issuer {
		t.Fatalf("discovery under /oauth2 = %s", b)
	}

	k := signingKey()
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	res, regBody := s.Do(t, http.MethodPost, oauth+"/register", strings.NewReader(fmt.Sprintf(`{"email":"samply@fris.test","name":"Samply registry","description":"key","base64EncodedPublicKey":%q}`, base64.StdEncoding.EncodeToString(der))), "Content-Type", "application/json")
	v := JSON(t, regBody)
	wantStatus(t, res, v, 200)
	for _, pair := range [][2]string{{"userId", "user_id"}, {"keyId", "key_id"}} {
		if a, ok := field(t, v, pair[0]).(float64); !ok || a == 0 || field(t, v, pair[1]) != a {
			t.Fatalf("register = %v: %s and %s differ", v, pair[0], pair[1])
		}
	}

	sum := sha512.Sum512(der)
	res, v = postJSON(t, s, oauth+"/sign_request", fmt.Sprintf(`{"key_id":0,"sha512Hash":%q}`, hex.EncodeToString(sum[:])))
	wantStatus(t, res, v, 200)
	var sr struct {
		Code      string `json:"code"`
		Exp       int64  `json:"exp"`
		Algorithm string `json:"algorithm"`
		// The spec's names, still there.
		ExpirationDate int64  `json:"expirationDate"`
		Algoritm       string `json:"algoritm"`
	}
	remarshal(t, v, &sr)
	if sr.Algorithm != "SHA512withRSA" || sr.Algoritm != sr.Algorithm || sr.Exp != sr.ExpirationDate || sr.Exp < time.Now().Unix() {
		t.Fatalf("sign request = %+v", sr)
	}
	// Signature.getInstance("SHA512withRSA"): PKCS #1 v1.5 over SHA-512.
	h := sha512.Sum512([]byte(sr.Code))
	sig, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA512, h[:])
	if err != nil {
		t.Fatal(err)
	}
	res, v = postJSON(t, s, oauth+"/access_token", fmt.Sprintf(`{"code":%q,"signature":%q}`, sr.Code, base64.StdEncoding.EncodeToString(sig)))
	wantStatus(t, res, v, 200)
	var tr samplyTokens
	remarshal(t, v, &tr)
	access := samplyVerify(t, hostKey, tr.AccessToken, "ACCESS_TOKEN")
	samplyVerify(t, hostKey, tr.IDToken, "ID_TOKEN")
	samplyVerify(t, hostKey, tr.RefreshToken, "REFRESH_TOKEN")
	if want := fmt.Sprint(field(t, JSON(t, regBody), "userId")); access.Subject != want {
		t.Fatalf("access sub = %q, want the registered user %s", access.Subject, want)
	}
	if !strings.Contains(" "+access.Scope+" ", " openid ") {
		t.Fatalf("scope = %q", access.Scope)
	}
	// Every access token has an audience; this flow has no client, so it
	// is the issuer.
	if len(access.Audience) != 1 || access.Audience[0] != Issuer {
		t.Fatalf("access aud = %v, want [%s]", access.Audience, Issuer)
	}
	// OpenIdConnectClient reads UserDto's id (a string): the user's id.
	_, b = s.Get(t, oauth+"/userinfo", 200, "Authorization", "Bearer "+tr.AccessToken)
	if id, ok := field(t, JSON(t, b), "id").(string); !ok || id != access.Subject || field(t, JSON(t, b), "sub") != id {
		t.Fatalf("userinfo = %s, want id %q", b, access.Subject)
	}
	// tokeninfo's scope is the token's own.
	_, b = s.Get(t, oauth+"/tokeninfo", 200, "Authorization", "Bearer "+tr.AccessToken)
	var info struct{ Scope []string }
	remarshal(t, JSON(t, b), &info)
	if strings.Join(info.Scope, " ") != access.Scope {
		t.Fatalf("tokeninfo scope %q, the token's %q", info.Scope, access.Scope)
	}
	// Its refresh, JSON {refresh_token} alone.
	res, v = postJSON(t, s, oauth+"/access_token", fmt.Sprintf(`{"refresh_token":%q}`, tr.RefreshToken))
	wantStatus(t, res, v, 200)
	remarshal(t, v, &tr)
	samplyVerify(t, hostKey, tr.AccessToken, "ACCESS_TOKEN")

	// Maintenance never replaces the pinned key.
	_, b = s.Get(t, oauth+"/certs", 200)
	if n := len(JSON(t, b).([]any)); n != 1 {
		t.Fatalf("-key-rotation 0: /certs has %d keys", n)
	}
}

func TestCompatSamplyAuthClientSecretFlow(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{})
	seedAuth(t, s)
	hostKey := samplyHostKey(t, s)
	code := login(t, s, "client_id="+demoClient+"&state=samply")
	res, v := postJSON(t, s, oauth+"/access_token", fmt.Sprintf(`{"code":%q,"client_id":%q,"client_secret":%q}`, code, demoClient, demoSecret))
	wantStatus(t, res, v, 200)
	var tr samplyTokens
	remarshal(t, v, &tr)
	access := samplyVerify(t, hostKey, tr.AccessToken, "ACCESS_TOKEN")
	id := samplyVerify(t, hostKey, tr.IDToken, "ID_TOKEN")
	samplyVerify(t, hostKey, tr.RefreshToken, "REFRESH_TOKEN")
	// JwtIdToken is built with the configured client ID.
	if len(id.Audience) != 1 || id.Audience[0] != demoClient || access.Subject != id.Subject {
		t.Fatalf("id token aud %v sub %q, access sub %q", id.Audience, id.Subject, access.Subject)
	}
	if access.Scope != "openid "+demoScopes {
		t.Fatalf("scope = %q", access.Scope)
	}
	// Its searchUser and the spec's tokeninfo (scope as an array there).
	_, b := s.Get(t, oauth+"/users/search?query=ada", 200, "Authorization", "Bearer "+tr.AccessToken)
	if field(t, JSON(t, b), 0, "sub") != access.Subject {
		t.Fatalf("search = %s", b)
	}
	_, b = s.Get(t, oauth+"/tokeninfo", 200, "Authorization", "Bearer "+tr.AccessToken)
	if sc, ok := field(t, JSON(t, b), "scope").([]any); !ok || len(sc) != 1+len(strings.Fields(demoScopes)) {
		t.Fatalf("tokeninfo scope = %s", b)
	}

	// getNewAccessToken with a refresh token: JSON {refresh_token}; all
	// three new tokens must be valid, the id token for the configured
	// client.
	res, v = postJSON(t, s, oauth+"/access_token", fmt.Sprintf(`{"refresh_token":%q}`, tr.RefreshToken))
	wantStatus(t, res, v, 200)
	remarshal(t, v, &tr)
	samplyVerify(t, hostKey, tr.AccessToken, "ACCESS_TOKEN")
	if id := samplyVerify(t, hostKey, tr.IDToken, "ID_TOKEN"); len(id.Audience) != 1 || id.Audience[0] != demoClient {
		t.Fatalf("refreshed id token aud %v", id.Audience)
	}
	samplyVerify(t, hostKey, tr.RefreshToken, "REFRESH_TOKEN")

	// getRestAccessToken: a form grant_type=client_credentials with the
	// client's id and secret; only the access token is read.
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {demoClient}, "client_secret": {demoSecret}}
	res, b = s.Do(t, http.MethodPost, oauth+"/access_token", strings.NewReader(form.Encode()), "Content-Type", "application/x-www-form-urlencoded")
	if res.StatusCode != 200 {
		t.Fatalf("rest access token = %d %s", res.StatusCode, b)
	}
	remarshal(t, JSON(t, b), &tr)
	if rest := samplyVerify(t, hostKey, tr.AccessToken, "ACCESS_TOKEN"); rest.Subject != "client:"+demoClient {
		t.Fatalf("rest token sub = %q", rest.Subject)
	}
}

type samplyParsed struct {
	samplyClaims
	Audience []string
}

// samplyHostKey is the one public key a Samply client is configured with
// (hostPublicKey), taken from /certs.
func samplyHostKey(t *testing.T, s *Stack) *rsa.PublicKey {
	t.Helper()
	_, b := s.Get(t, oauth+"/certs", 200)
	der, err := base64.StdEncoding.DecodeString(field(t, JSON(t, b), 0, "base64DerFormat").(string))
	if err != nil {
		t.Fatal(err)
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		t.Fatal(err)
	}
	return k.(*rsa.PublicKey)
}

// samplyVerify is AbstractJwt.isValid: the signature with the configured
// key (RS256/RS384/RS512 by the header), exp in the future, nbf past, and
// the token type.
func samplyVerify(t *testing.T, key *rsa.PublicKey, tok, typ string) samplyParsed {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("%s is not a compact JWS", typ)
	}
	var hdr struct {
		Alg string `json:"alg"`
	}
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if err := json.Unmarshal(hb, &hdr); err != nil {
		t.Fatal(err)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	signed := []byte(parts[0] + "." + parts[1])
	switch hdr.Alg {
	case "RS256":
		h := sha256.Sum256(signed)
		err = rsa.VerifyPKCS1v15(key, crypto.SHA256, h[:], sig)
	case "RS512":
		h := sha512.Sum512(signed)
		err = rsa.VerifyPKCS1v15(key, crypto.SHA512, h[:], sig)
	default:
		t.Fatalf("%s alg %q", typ, hdr.Alg)
	}
	if err != nil {
		t.Fatalf("%s does not verify with the /certs key: %v", typ, err)
	}
	pb, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c samplyParsed
	if err := json.Unmarshal(pb, &c.samplyClaims); err != nil {
		t.Fatalf("%s claims do not parse as the Samply client reads them: %v\n%s", typ, err, pb)
	}
	if len(c.samplyClaims.Audience) > 0 {
		var one string
		if json.Unmarshal(c.samplyClaims.Audience, &one) == nil {
			c.Audience = []string{one}
		} else if err := json.Unmarshal(c.samplyClaims.Audience, &c.Audience); err != nil {
			t.Fatalf("%s aud: %v", typ, err)
		}
	}
	now := time.Now().Unix()
	if c.Type != typ || c.Expires <= now || (c.NotBefore != 0 && c.NotBefore >= now) {
		t.Fatalf("%s not valid: %+v", typ, c.samplyClaims)
	}
	return c
}

func remarshal(t *testing.T, v, into any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
}
