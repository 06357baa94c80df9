package service

import (
	"testing"

	"github.com/go-webauthn/webauthn/webauthn"

	"fris.dev/services/auth/internal/storage"
)

// FuzzPasskeyAnswers throws arbitrary browser answers at what reads them:
// the bounds and the library's parsers (registration and sign-in), the
// sign-in's checks against a live ceremony, the user handle and the
// passkey's name. Nothing panics, and no answer signs anyone in.
// TestPasskeyCeremonyChecks drives the same through the service.
func FuzzPasskeyAnswers(f *testing.F) {
	rp, err := newRelyingParty(PasskeyConfig{RPID: "fris.test", Origins: []string{rpOrigin}})
	if err != nil {
		f.Fatal(err)
	}
	a := newAuthenticator(rpOrigin)
	created, c := a.create(f, `{"publicKey":{"challenge":"AAAA","rp":{"id":"fris.test"},"user":{"id":"ZnJpcy11c2VyOjE"}}}`)
	f.Add(created)
	f.Add(a.get(f, `{"publicKey":{"challenge":"AAAA","rpId":"fris.test"}}`, c))
	f.Add(`{"id":"AAAA","rawId":"AAAA","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"AAAA","signature":"AAAA","userHandle":"ZnJpcy11c2VyOjE"}}`)
	f.Add(`{`)
	f.Add(`null`)
	user := passkeyUser{u: storage.User{ID: 1, Email: "ada@example.org"}}
	f.Fuzz(func(t *testing.T, answer string) {
		_, _ = parseAttestation(answer)
		_, _ = handleUser([]byte(answer))
		_, _ = checkPasskeyName(answer)
		parsed, err := parseAssertion(answer)
		if err != nil {
			return
		}
		_, session, err := rp.BeginDiscoverableLogin()
		if err != nil {
			t.Fatal(err)
		}
		found := func(_, handle []byte) (webauthn.User, error) {
			if _, ok := handleUser(handle); !ok {
				return nil, errPasskeyRefused
			}
			return user, nil // a user with no passkeys: nothing can verify
		}
		if _, _, err := rp.ValidatePasskeyLogin(found, *session, parsed); err == nil {
			t.Fatalf("the answer %q signed someone in", answer)
		}
	})
}
