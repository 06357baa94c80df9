package service

import (
	"context"
	"testing"

	authv1 "fris.dev/proto/auth/v1"
)

// FuzzPasskeyLogin throws arbitrary answers at the passkey sign-in: the
// browser's JSON (which the library parses, bounded first), against a live
// ceremony. Every answer is a client's mistake, never a 500, and none
// signs anyone in.
func FuzzPasskeyLogin(f *testing.F) {
	e := newEnv(f, func(c *Config) { c.Passkeys = PasskeyConfig{RPID: "fris.test", Origins: []string{rpOrigin}} })
	clientID, _ := e.seed(f)
	f.Add(`{"id":"AAAA","rawId":"AAAA","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"AAAA","signature":"AAAA","userHandle":"ZnJpcy11c2VyOjE"}}`)
	f.Add(`{"type":"public-key","response":{"attestationObject":"oA"}}`)
	f.Add(`{`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, answer string) {
		if !valid(answer) {
			return
		}
		ctx := context.Background()
		ar := &authv1.AuthorizeRequest{ClientId: clientID}
		begin, err := e.pub.BeginPasskeyLogin(ctx, &authv1.BeginPasskeyLoginRequest{Request: ar})
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.pub.FinishPasskeyLogin(ctx, &authv1.FinishPasskeyLoginRequest{Request: ar, Ceremony: begin.GetCeremony(), Credential: answer})
		if err == nil || res.GetCode() != "" {
			t.Fatalf("the answer %q signed someone in", answer)
		}
		if !clientError(err) {
			t.Fatalf("answer %q: %v", answer, err)
		}
		// The registration's parser, directly: it must not panic.
		_, _ = parseAttestation(answer)
	})
}
