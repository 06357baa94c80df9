package e2e

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

func spkiB64(t *testing.T, pub any) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(der)
}

func TestAuthSignatureFlowAndRegistration(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{})
	seedAuth(t, s)
	k := signingKey()
	reg := fmt.Sprintf(`{"email":"registry@fris.test","name":"A registry","description":"laptop","base64EncodedPublicKey":%q}`, spkiB64(t, &k.PublicKey))
	res, v := postJSON(t, s, oauth+"/register", reg)
	wantStatus(t, res, v, 200)
	userID, keyID := field(t, v, "userId").(float64), field(t, v, "keyId").(float64)
	if userID <= 0 || keyID <= 0 || field(t, v, "user_id") != userID || field(t, v, "key_id") != keyID {
		t.Fatalf("register = %v", v)
	}
	res, v = postJSON(t, s, oauth+"/register", reg)
	wantStatus(t, res, v, 409)

	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	for _, body := range []string{
		``,
		`{"email":"x@fris.test","base64EncodedPublicKey":"%%%"}`,
		fmt.Sprintf(`{"email":"x@fris.test","base64EncodedPublicKey":%q}`, spkiB64(t, &ec.PublicKey)),
		fmt.Sprintf(`{"email":"x@fris.test","base64EncodedPublicKey":%q}`, spkiB64(t, &small.PublicKey)),
	} {
		res, v = postJSON(t, s, oauth+"/register", body)
		wantStatus(t, res, v, 400)
	}

	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	sum := sha512.Sum512(der)
	sign := func(code string) string {
		h := sha512.Sum512([]byte(code))
		sig, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA512, h[:])
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(sig)
	}
	for _, tc := range []struct{ path, body string }{
		{"/sign_request", fmt.Sprintf(`{"keyId":%d}`, int(keyID))},
		{"/sign_request", fmt.Sprintf(`{"sha512Hash":%q}`, hex.EncodeToString(sum[:]))},
		{"/signRequest", fmt.Sprintf(`{"keyId":0,"sha512Hash":%q}`, strings.ToUpper(hex.EncodeToString(sum[:])))},
		{"/sign_request", fmt.Sprintf(`{"key_id":%d}`, int(keyID))},
	} {
		res, v := postJSON(t, s, oauth+tc.path, tc.body)
		wantStatus(t, res, v, 200)
		if field(t, v, "algoritm") != "SHA512withRSA" {
			t.Fatalf("sign request = %v", v)
		}
		if exp := field(t, v, "expirationDate").(float64); exp < float64(time.Now().Unix()) {
			t.Fatalf("expirationDate = %v", exp)
		}
		code := field(t, v, "code").(string)
		res, v = postJSON(t, s, oauth+"/token", fmt.Sprintf(`{"code":%q,"client_id":%q,"signature":%q}`, code, demoClient, sign(code)))
		wantStatus(t, res, v, 200)
		access, _, _ := tokens(t, v)
		if field(t, jwtPart(t, access, 1), "sub") != strconv.Itoa(int(userID)) {
			t.Fatal("token for the wrong user")
		}
	}
	for _, body := range []string{`{"keyId":2147483647}`, `{"sha512Hash":"` + strings.Repeat("ab", 64) + `"}`} {
		res, v := postJSON(t, s, oauth+"/sign_request", body)
		wantStatus(t, res, v, 404)
	}
	// A disabled user: 401.
	res, v = postJSON(t, s, oauth+"/sign_request", fmt.Sprintf(`{"keyId":%d}`, int(keyID)))
	wantStatus(t, res, v, 200)
	code := field(t, v, "code").(string)
	s.AuthCLI(t, 0, "disable-user", "registry@fris.test")
	res, v = postJSON(t, s, oauth+"/token", fmt.Sprintf(`{"code":%q,"client_id":%q,"signature":%q}`, code, demoClient, sign(code)))
	wantStatus(t, res, v, 401)

	// Registration switched off: 501.
	off := NewStack(t, Options{AuthArgs: []string{"-registration=false"}})
	res, v = postJSON(t, off, oauth+"/register", reg)
	wantStatus(t, res, v, 501)
}
