package app

import (
	"slices"
	"testing"
)

// The relying party follows -issuer unless given: a domain as it is, a
// loopback address as localhost, another address not at all.
func TestPasskeyRelyingParty(t *testing.T) {
	for _, tc := range []struct {
		issuer, rpID, origins string
		on                    bool
		wantID                string
		wantOrigins           []string
	}{
		{"https://fris.example.org", "", "", true, "fris.example.org", []string{"https://fris.example.org"}},
		{"https://fris.example.org:8443/", "", "", true, "fris.example.org", []string{"https://fris.example.org:8443"}},
		{"http://127.0.0.1:8080", "", "", true, "localhost", []string{"http://localhost:8080"}},
		{"http://192.0.2.1:8080", "", "", true, "", nil},
		{"http://192.0.2.1:8080", "fris.example.org", "https://login.fris.example.org,https://fris.example.org", true, "fris.example.org",
			[]string{"https://login.fris.example.org", "https://fris.example.org"}},
		{"https://fris.example.org", "", "", false, "", nil},
	} {
		c := Passkeys{Passkeys: tc.on, PasskeyRPID: tc.rpID, PasskeyOrigins: tc.origins}
		got := c.relyingParty(tc.issuer)
		if got.RPID != tc.wantID || !slices.Equal(got.Origins, tc.wantOrigins) {
			t.Errorf("%+v with %s: %+v", c, tc.issuer, got)
		}
		if err := c.validate(tc.issuer); err != nil {
			t.Errorf("%+v with %s: %v", c, tc.issuer, err)
		}
	}
	for _, bad := range []Passkeys{{Passkeys: true, PasskeyRPID: "192.0.2.1"}, {Passkeys: true, PasskeyRPID: "https://fris.example.org"},
		{Passkeys: true, PasskeyOrigins: "fris.example.org"}, {Passkeys: true, PasskeyOrigins: "https://fris.example.org/login"}} {
		if bad.validate("https://fris.example.org") == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
