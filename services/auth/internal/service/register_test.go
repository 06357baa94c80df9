package service

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	authv1 "fris.dev/proto/auth/v1"
)

func TestSignatureFlow(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clientID, _ := e.seed(t)
	k := userKey()
	reg := register(t, e, "registry@example.org", k)
	if strconv.Itoa(int(reg.GetUserId())) != e.uid(t, "registry@example.org") || reg.GetKeyId() <= 0 {
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
		if claims(t, res.GetAccessToken()).Subject() != e.uid(t, "registry@example.org") {
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
