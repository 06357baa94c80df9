package app

import (
	"strings"
	"testing"
)

// TestScopeFlags: -default-scopes and -register-scopes take RFC 6749
// scope-tokens only, as every other grant (service.CheckScopes).
func TestScopeFlags(t *testing.T) {
	for _, good := range []string{"", "broker:researcher,users:search", "FRIS:OPERATOR"} {
		s := Signup{RegisterScopes: good}
		if err := scopesError("-register-scopes", s.RegisterScopes); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
	for _, bad := range []string{"x\u200by", "a b", "broker:researcher,\x01", `a"b`} {
		err := scopesError("-register-scopes", bad)
		if err == nil || !strings.Contains(err.Error(), "scope-token") || !strings.HasPrefix(err.Error(), "-register-scopes: ") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	tk := Tokens{Scopes: "mdr:x,x\u200by"}
	if err := tk.Validate(); err == nil || !strings.Contains(err.Error(), "-default-scopes") {
		t.Errorf("-default-scopes with a zero-width space: %v", err)
	}
}
