package service

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
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

// FuzzLogin throws arbitrary authorization requests and credentials at the
// login: only client errors, and a successful login never redirects
// anywhere but to one of the client's registered URLs.
func FuzzLogin(f *testing.F) {
	e := newEnv(f)
	clientID, _ := e.seed(f)
	registered := map[string]bool{"https://app.example/cb": true, "https://app.example/cb2": true}
	f.Add(clientID, "", "", "", "", "", "ada@example.org", "correct horse")
	f.Add(clientID, "https://app.example/cb2", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "S256", "openid mdr:secret", "n", "ADA@example.org", "correct horse")
	f.Add(clientID, "https://evil.example/cb", "", "plain", "", "", "ada@example.org", "correct horse")
	f.Add("nope", "https://app.example/cb?x=1", "x", "S256", "a b", "", "nobody@example.org", "wrong")
	f.Fuzz(func(t *testing.T, client, redirect, challenge, method, scope, nonce, email, pass string) {
		if !valid(client, redirect, challenge, method, scope, nonce, email, pass) {
			return
		}
		ar := &authv1.AuthorizeRequest{ClientId: client, RedirectUri: redirect, CodeChallenge: challenge, CodeChallengeMethod: method, Scope: scope, Nonce: nonce}
		a, err := e.pub.Authorize(context.Background(), ar)
		if !clientError(err) || (err == nil && !registered[a.GetRedirectUri()]) {
			t.Fatalf("Authorize(%v) = %v, %v", ar, a, err)
		}
		res, err := e.pub.Login(context.Background(), &authv1.LoginRequest{Request: ar, Email: email, Password: pass})
		if !clientError(err) || (err == nil && (!registered[res.GetRedirectUri()] || res.GetCode() == "")) {
			t.Fatalf("Login(%v, %q, %q) = %v, %v", ar, email, pass, res, err)
		}
	})
}

// FuzzBearerCalls sends arbitrary authorization metadata and search queries
// to the bearer-protected calls; a valid token is among the seeds, so the
// query is explored past the token check.
func FuzzBearerCalls(f *testing.F) {
	e := newEnv(f)
	clientID, secret := e.seed(f)
	code := func() string {
		res, err := e.pub.Login(context.Background(), &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: "ada@example.org", Password: "correct horse"})
		if err != nil {
			f.Fatal(err)
		}
		return res.GetCode()
	}()
	res, err := e.pub.Token(context.Background(), &authv1.TokenRequest{Code: code, ClientId: clientID, ClientSecret: secret})
	if err != nil {
		f.Fatal(err)
	}
	f.Add("Bearer "+res.GetAccessToken(), "ada")
	f.Add("Bearer "+res.GetAccessToken(), "%_*")
	f.Add("Bearer "+res.GetIdToken(), "")
	f.Add("bearer   x.y.z", "a")
	f.Add("Basic abc", "")
	f.Fuzz(func(t *testing.T, authz, query string) {
		// gRPC metadata values are printable ASCII; the gateway forwards
		// nothing else.
		if !valid(query) || strings.ContainsFunc(authz, func(r rune) bool { return r < 0x20 || r > 0x7e }) {
			return
		}
		ctx := metadata.NewOutgoingContext(context.Background(), metadata.Pairs("authorization", authz))
		_, err := e.pub.GetTokenInfo(ctx, &authv1.GetTokenInfoRequest{})
		if !clientError(err) {
			t.Fatalf("GetTokenInfo(%q) = %v", authz, err)
		}
		_, err = e.pub.GetUserInfo(ctx, &authv1.GetUserInfoRequest{})
		if !clientError(err) {
			t.Fatalf("GetUserInfo(%q) = %v", authz, err)
		}
		_, err = e.pub.SearchUsers(ctx, &authv1.SearchUsersRequest{Query: query})
		if !clientError(err) {
			t.Fatalf("SearchUsers(%q, %q) = %v", authz, query, err)
		}
	})
}
