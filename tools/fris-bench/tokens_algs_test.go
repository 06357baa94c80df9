package main

import (
	"encoding/base64"
	"testing"
)

// TestFlowSignatures counts the RSA signatures of a response from its
// tokens' headers, and falls back to serverSignatures for tokens it
// cannot read.
func TestFlowSignatures(t *testing.T) {
	jwt := func(alg string) string {
		return base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"`+alg+`","kid":"k","typ":"JWT"}`)) + ".e30.c2ln"
	}
	for _, tc := range []struct {
		last    tokenSet
		n       int
		carried string
	}{
		{tokenSet{Access: jwt("RS256"), ID: jwt("RS256"), Refresh: jwt("RS256")}, 3, "access RS256, id RS256, refresh RS256"},
		{tokenSet{Access: jwt("RS256"), Refresh: jwt("HS256")}, 1, "access RS256, no id, refresh HS256"},
		{tokenSet{Access: "opaque", Refresh: "opaque"}, serverSignatures, ""},
	} {
		n, carried := flowSignatures([]session{&refreshChain{}, &refreshChain{last: tc.last}})
		if n != tc.n || carried != tc.carried {
			t.Errorf("%+v: %d %q, want %d %q", tc.last, n, carried, tc.n, tc.carried)
		}
		// The signature flow's sessions are read the same way.
		n, carried = flowSignatures([]session{&signSession{}, &signSession{last: tc.last}})
		if n != tc.n || carried != tc.carried {
			t.Errorf("signature flow, %+v: %d %q, want %d %q", tc.last, n, carried, tc.n, tc.carried)
		}
	}
}
