package e2e

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// The answer shapes of group A (-auth-answers): each setting's answers are
// read the way a strict client reads them, unknown names being errors, as
// Jackson with its defaults does. The readers are auth-dto's DTO classes
// (the names Jersey's Jackson provider reads: @XmlElement where a getter
// has one, else the bean name) for samply, and the spec's tables for spec.

type (
	dtoSignRequest struct {
		Code      string `json:"code"`
		Exp       int64  `json:"exp"`
		Algorithm string `json:"algorithm"`
	}
	dtoRegistration struct {
		UserID int `json:"user_id"`
		KeyID  int `json:"key_id"`
	}
	dtoAccessToken struct {
		AccessToken      string `json:"access_token"`
		IDToken          string `json:"id_token"`
		RefreshToken     string `json:"refresh_token"`
		TokenType        string `json:"token_type"`
		ExpiresIn        int    `json:"expires_in"`
		RefreshExpiresIn int    `json:"refresh_expires_in"`
	}
	dtoTokenInfo struct {
		ExpirationDate int64    `json:"expirationDate"`
		Subject        string   `json:"subject"`
		Scope          []string `json:"scope"`
		Jti            string   `json:"jti"`
		NotBefore      int64    `json:"notBefore"`
		IssuedAt       int64    `json:"issuedAt"`
		Issuer         string   `json:"issuer"`
	}
	dtoLocation struct {
		ID, Name, Description, Contact string
	}
	dtoUser struct {
		Name               string            `json:"name"`
		FirstName          string            `json:"firstName"`
		LastName           string            `json:"lastName"`
		Email              string            `json:"email"`
		ID                 string            `json:"id"`
		EmailVerified      *bool             `json:"email_verified"`
		ExternalLabel      string            `json:"external_label"`
		ContactInformation string            `json:"contact_information"`
		Locations          []dtoLocation     `json:"locations"`
		Roles              []json.RawMessage `json:"roles"`
	}
	dtoUserList struct {
		Users []dtoUser `json:"users"`
	}
	dtoClientList struct {
		Clients []struct {
			Name, Description, ClientID, RedirectURL, Type string
		} `json:"clients"`
	}

	specSignRequestAnswer struct {
		Code           string `json:"code"`
		ExpirationDate int64  `json:"expirationDate"`
		Algoritm       string `json:"algoritm"`
	}
	specRegistrationAnswer struct {
		UserID int `json:"userId"`
		KeyID  int `json:"keyId"`
	}
	specTokenAnswer struct {
		AccessToken  string `json:"access_token"`
		IDToken      string `json:"id_token"`
		RefreshToken string `json:"refresh_token"`
	}
	specTokenInfoAnswer struct {
		ExpirationDate int64    `json:"expirationDate"`
		Subject        string   `json:"subject"`
		Scope          []string `json:"scope"`
		Nonce          string   `json:"nonce"`
		NotBeofre      int64    `json:"notBeofre"`
		Issuer         string   `json:"issuer"`
	}
	specUserInfoAnswer struct {
		RealName           string `json:"real_name"`
		ContactInformation string `json:"contact_information"`
		Locality           *struct {
			ID          string `json:"id"`
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"locality"`
		Email         string `json:"email"`
		EmailVerified bool   `json:"email_verified"`
	}
	specClientAnswer struct {
		ClientID    string `json:"clientId"`
		Name        string `json:"name"`
		Description string `json:"description"`
		RedirectURL string `json:"redirectUrl"`
		Type        string `json:"type"`
	}
)

// strictJSON decodes a 200 answer the way Jackson's defaults do.
func strictJSON(t *testing.T, res *http.Response, b []byte, into any) {
	t.Helper()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s %s = %d: %s", res.Request.Method, res.Request.URL.Path, res.StatusCode, b)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		t.Fatalf("%s %s: %s does not read into %T: %v", res.Request.Method, res.Request.URL.Path, b, into, err)
	}
}

// names are the members of a JSON object answer.
func names(t *testing.T, b []byte) map[string]bool {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

func wantNames(t *testing.T, what string, b []byte, want string) {
	t.Helper()
	got := names(t, b)
	for _, n := range strings.Fields(want) {
		if !got[n] {
			t.Fatalf("%s: %s lacks %s", what, b, n)
		}
	}
}

// accessClaims are the access token's claims the answers must agree with.
type accessClaims struct {
	Subject  string          `json:"sub"`
	Audience json.RawMessage `json:"aud"`
	Scope    string          `json:"scope"`
	ID       string          `json:"jti"`
}

func readAccess(t *testing.T, tok string) accessClaims {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("access token %q is not a JWS", tok)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c accessClaims
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAuthShapes(t *testing.T) {
	t.Parallel()
	for _, shape := range []string{"samply", "spec", "both"} {
		t.Run(shape, func(t *testing.T) {
			s := NewStack(t, Options{GatewayArgs: []string{"-auth-answers", shape}})
			seedAuth(t, s)
			authShapeFlows(t, s, shape)
		})
	}
}

func authShapeFlows(t *testing.T, s *Stack, shape string) {
	post := func(path, body string) (*http.Response, []byte) {
		return s.Do(t, http.MethodPost, oauth+path, strings.NewReader(body), "Content-Type", "application/json")
	}
	bearer := func(path, tok string) (*http.Response, []byte) {
		return s.Do(t, http.MethodGet, oauth+path, nil, "Authorization", "Bearer "+tok)
	}

	// Register a registry's key.
	k := signingKey()
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	res, b := post("/register", fmt.Sprintf(`{"email":"registry-%s@fris.test","name":"Registry","description":"key","base64EncodedPublicKey":%q}`,
		shape, base64.StdEncoding.EncodeToString(der)))
	var userID, keyID int
	switch shape {
	case "samply":
		var r dtoRegistration
		strictJSON(t, res, b, &r)
		userID, keyID = r.UserID, r.KeyID
	case "spec":
		var r specRegistrationAnswer
		strictJSON(t, res, b, &r)
		userID, keyID = r.UserID, r.KeyID
	default:
		wantNames(t, "register", b, "userId keyId user_id key_id")
		var r specRegistrationAnswer
		_ = json.Unmarshal(b, &r)
		userID, keyID = r.UserID, r.KeyID
	}
	if userID == 0 || keyID == 0 {
		t.Fatalf("register: %s", b)
	}

	// A sign request (as the Samply client asks: by hash, key_id 0), the
	// signed code, the tokens.
	sum := sha512.Sum512(der)
	res, b = post("/sign_request", fmt.Sprintf(`{"key_id":0,"sha512Hash":%q}`, hex.EncodeToString(sum[:])))
	var code, alg string
	switch shape {
	case "samply":
		var r dtoSignRequest
		strictJSON(t, res, b, &r)
		code, alg = r.Code, r.Algorithm
	case "spec":
		var r specSignRequestAnswer
		strictJSON(t, res, b, &r)
		code, alg = r.Code, r.Algoritm
	default:
		wantNames(t, "sign request", b, "code expirationDate algoritm exp algorithm")
		var r dtoSignRequest
		_ = json.Unmarshal(b, &r)
		code, alg = r.Code, r.Algorithm
	}
	if code == "" || alg != "SHA512withRSA" {
		t.Fatalf("sign request: %s", b)
	}
	h := sha512.Sum512([]byte(code))
	sig, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA512, h[:])
	if err != nil {
		t.Fatal(err)
	}
	res, b = post("/access_token", fmt.Sprintf(`{"code":%q,"signature":%q}`, code, base64.StdEncoding.EncodeToString(sig)))
	access, refresh := shapedTokens(t, shape, res, b)

	// The key flow's access token has an audience: the issuer (no client).
	c := readAccess(t, access)
	var aud []string
	if json.Unmarshal(c.Audience, &aud) != nil || len(aud) != 1 || aud[0] != Issuer || c.Subject != strconv.Itoa(userID) {
		t.Fatalf("key flow access token: sub %q aud %s", c.Subject, c.Audience)
	}
	res, b = post("/access_token", fmt.Sprintf(`{"refresh_token":%q}`, refresh))
	access, _ = shapedTokens(t, shape, res, b)

	// tokeninfo reports exactly the token's scope; userinfo the user's id.
	c = readAccess(t, access)
	res, b = bearer("/tokeninfo", access)
	var scope []string
	var subject string
	switch shape {
	case "samply":
		var r dtoTokenInfo
		strictJSON(t, res, b, &r)
		scope, subject = r.Scope, r.Subject
		if r.Jti != c.ID || r.IssuedAt == 0 || r.NotBefore == 0 || r.Issuer != Issuer {
			t.Fatalf("tokeninfo: %s", b)
		}
	case "spec":
		var r specTokenInfoAnswer
		strictJSON(t, res, b, &r)
		scope, subject = r.Scope, r.Subject
	default:
		wantNames(t, "tokeninfo", b, "expirationDate subject scope nonce notBeofre issuer jti notBefore issuedAt")
		var r specTokenInfoAnswer
		_ = json.Unmarshal(b, &r)
		scope, subject = r.Scope, r.Subject
	}
	if subject != c.Subject || strings.Join(scope, " ") != c.Scope {
		t.Fatalf("tokeninfo %s, the token's sub %q scope %q", b, c.Subject, c.Scope)
	}
	res, b = bearer("/userinfo", access)
	switch shape {
	case "samply":
		var u dtoUser
		strictJSON(t, res, b, &u)
		if u.ID != strconv.Itoa(userID) || u.Name != "Registry" || u.Email != "registry-samply@fris.test" {
			t.Fatalf("userinfo: %s", b)
		}
	case "spec":
		var u specUserInfoAnswer
		strictJSON(t, res, b, &u)
		if u.RealName != "Registry" || u.Email != "registry-spec@fris.test" {
			t.Fatalf("userinfo: %s", b)
		}
	default:
		wantNames(t, "userinfo", b, "real_name contact_information locality email email_verified sub name id")
		if v := JSON(t, b); field(t, v, "id") != strconv.Itoa(userID) || field(t, v, "sub") != field(t, v, "id") {
			t.Fatalf("userinfo: %s", b)
		}
	}

	// The lists: the demo user's token holds users:search.
	tokRes, tb := post("/access_token", fmt.Sprintf(`{"code":%q,"client_id":%q,"client_secret":%q}`, login(t, s, "client_id="+demoClient+"&state=x"), demoClient, demoSecret))
	ada, _ := shapedTokens(t, shape, tokRes, tb)
	res, b = bearer("/users/search?query=ada", ada)
	clientsRes, cb := s.Do(t, http.MethodGet, oauth+"/clients", nil)
	switch shape {
	case "samply":
		var l dtoUserList
		strictJSON(t, res, b, &l)
		if len(l.Users) != 1 || l.Users[0].Email != demoEmail || l.Users[0].ID == "" {
			t.Fatalf("users/search: %s", b)
		}
		var cl dtoClientList
		strictJSON(t, clientsRes, cb, &cl)
		if len(cl.Clients) != 1 || cl.Clients[0].ClientID != demoClient {
			t.Fatalf("clients: %s", cb)
		}
	case "spec":
		var l []specUserInfoAnswer
		strictJSON(t, res, b, &l)
		if len(l) != 1 || l[0].Email != demoEmail {
			t.Fatalf("users/search: %s", b)
		}
		var cl []specClientAnswer
		strictJSON(t, clientsRes, cb, &cl)
		if len(cl) != 1 || cl[0].ClientID != demoClient {
			t.Fatalf("clients: %s", cb)
		}
	default:
		if field(t, JSON(t, b), 0, "email") != demoEmail || field(t, JSON(t, cb), 0, "clientId") != demoClient {
			t.Fatalf("users/search %s, clients %s", b, cb)
		}
	}
}

// shapedTokens reads a token answer of the shape and returns the access and
// refresh tokens.
func shapedTokens(t *testing.T, shape string, res *http.Response, b []byte) (access, refresh string) {
	t.Helper()
	switch shape {
	case "samply":
		var r dtoAccessToken
		strictJSON(t, res, b, &r)
		if r.TokenType != "Bearer" || r.ExpiresIn <= 0 || r.IDToken == "" {
			t.Fatalf("token: %s", b)
		}
		return r.AccessToken, r.RefreshToken
	case "spec":
		var r specTokenAnswer
		strictJSON(t, res, b, &r)
		if r.IDToken == "" {
			t.Fatalf("token: %s", b)
		}
		return r.AccessToken, r.RefreshToken
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("token = %d: %s", res.StatusCode, b)
	}
	wantNames(t, "token", b, "access_token id_token refresh_token token_type expires_in")
	var r specTokenAnswer
	_ = json.Unmarshal(b, &r)
	return r.AccessToken, r.RefreshToken
}
