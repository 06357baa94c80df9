package service

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/identity"
	"fris.dev/pkg/ratelimit"
	authv1 "fris.dev/proto/auth/v1"
)

func fromAddr(addr string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), identity.KeyClientAddr, addr)
}

// Strangers fill the account's ceiling; the holder from its usual address
// and a new address with the known-device token still signs in, a new
// address without it meets the ceiling.
func TestLoginKnownHolderPassesTheCeiling(t *testing.T) {
	per := ratelimit.Policy{Limit: ratelimit.Limit{Events: 2, Per: time.Hour, Burst: 2}}
	e := newEnv(t, func(c *Config) {
		limits := ratelimit.New(nil, nil, nil)
		c.Guards.Login = limits.Guard("login", per, ratelimit.Policy{}).
			WithCeiling(ratelimit.Policy{Limit: ratelimit.Limit{Events: 4, Per: time.Hour, Burst: 4}})
	})
	clientID, _ := e.seed(t)
	login := func(addr, password, device string) (*authv1.LoginResponse, error) {
		return e.pub.Login(fromAddr(addr), &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID},
			Email: "ada@example.org", Password: password, Device: device})
	}
	res, err := login("192.0.2.1", "correct horse", "")
	if err != nil {
		t.Fatal(err)
	}
	device := res.GetDevice()
	if len(device) != 43 {
		t.Fatalf("device token %q, want 256 bits in base64url", device)
	}
	failed := 0
	for i := range 6 {
		_, err := login(fmt.Sprintf("203.0.113.%d", i+1), "wrong", "")
		if code := status.Code(err); code == codes.Unauthenticated {
			failed++
		} else if code != codes.ResourceExhausted {
			t.Fatalf("guess %d: %v", i+1, err)
		}
	}
	if failed != 4 {
		t.Fatalf("%d guesses checked from 6 addresses, want the ceiling's 4", failed)
	}
	// A password verified a moment ago passes without the limiter; a new
	// one is checked (and so meets the ceiling) until it is verified.
	if _, err := login("198.51.100.9", "correct horse", ""); err != nil {
		t.Fatalf("the password verified a moment ago: %v", err)
	}
	if _, err := e.adm.SetPassword(context.Background(), &authv1.SetPasswordRequest{Email: "ada@example.org", Password: "new horse battery"}); err != nil {
		t.Fatal(err)
	}
	_, err = login("198.51.100.1", "new horse battery", "")
	wantCode(t, err, codes.ResourceExhausted)
	// Another token: its first character changed (a random token may
	// start with any of them).
	other := "x" + device[1:]
	if device[0] == 'x' {
		other = "y" + device[1:]
	}
	_, err = login("198.51.100.2", "new horse battery", other)
	wantCode(t, err, codes.ResourceExhausted)
	if res, err := login("198.51.100.1", "new horse battery", device); err != nil || res.GetDevice() != device {
		t.Fatalf("a new address with the device token: %v (device %q)", err, res.GetDevice())
	}
	if _, err := e.adm.SetPassword(context.Background(), &authv1.SetPasswordRequest{Email: "ada@example.org", Password: "third horse battery"}); err != nil {
		t.Fatal(err)
	}
	if _, err := login("192.0.2.1", "third horse battery", ""); err != nil {
		t.Fatalf("the usual address: %v", err)
	}
}
