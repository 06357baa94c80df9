package service

import (
	"context"
	"encoding/base64"
	"testing"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	authv1 "fris.dev/proto/auth/v1"
)

// valid filters inputs proto cannot carry: strings must be UTF-8, and the
// gateway's JSON decoding refuses anything else before it reaches gRPC.
func valid(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// clientError reports whether err is one of the answers a client mistake may
// get: never Internal or Unknown, which would be a 500.
func clientError(err error) bool {
	switch status.Code(err) {
	case codes.OK, codes.InvalidArgument, codes.NotFound, codes.Unauthenticated, codes.PermissionDenied, codes.AlreadyExists:
		return true
	}
	return false
}

// FuzzToken throws arbitrary token requests at the service: JSON fields,
// JWTs, codes and signatures from outside.
func FuzzToken(f *testing.F) {
	e := newEnv(f)
	clientID, secret := e.seed(f)
	f.Add("", clientID, secret, "", "")
	f.Add("code", clientID, "", "AAAA", "")
	f.Add("", "", "", "", "eyJhbGciOiJSUzI1NiJ9.e30.AAAA")
	f.Add("x", "nope", "y", "", "")
	f.Add("", "", "", "", "a.b.c")
	f.Fuzz(func(t *testing.T, code, client, sec, sig, refresh string) {
		if !valid(code, client, sec, sig, refresh) {
			return
		}
		_, err := e.pub.Token(context.Background(), &authv1.TokenRequest{Code: code, ClientId: client, ClientSecret: sec, Signature: sig, RefreshToken: refresh})
		if err == nil || !clientError(err) {
			t.Fatalf("Token(%q,%q,%q,%q,%q) = %v", code, client, sec, sig, refresh, err)
		}
	})
}

// FuzzRegister: arbitrary emails and keys are refused cleanly or create a
// user; nothing half-made, nothing internal.
func FuzzRegister(f *testing.F) {
	e := newEnv(f)
	f.Add("a@example.org", base64.StdEncoding.EncodeToString([]byte("not a key")), "")
	f.Add("", "", "")
	f.Add("x", "%%%", "name")
	f.Fuzz(func(t *testing.T, email, key, name string) {
		if !valid(email, key, name) {
			return
		}
		_, err := e.pub.Register(context.Background(), &authv1.RegisterRequest{Email: email, Name: name, Base64EncodedPublicKey: key})
		if !clientError(err) {
			t.Fatalf("Register(%q,%q) = %v", email, key, err)
		}
	})
}

func FuzzSignRequest(f *testing.F) {
	e := newEnv(f)
	f.Add(int32(0), "", int32(0))
	f.Add(int32(-1), "zz", int32(5))
	f.Add(int32(1), "ABCDEF", int32(0))
	f.Fuzz(func(t *testing.T, id int32, hash string, alias int32) {
		if !valid(hash) {
			return
		}
		_, err := e.pub.SignRequest(context.Background(), &authv1.SignRequestRequest{KeyId: id, Sha512Hash: hash, KeyIdAlias: alias})
		if err == nil || !clientError(err) {
			t.Fatalf("SignRequest(%d,%q,%d) = %v", id, hash, alias, err)
		}
	})
}
