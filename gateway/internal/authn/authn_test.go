package authn

import (
	"net/http/httptest"
	"testing"
)

func TestBearerToken(t *testing.T) {
	for _, tc := range []struct{ header, want string }{
		{"", ""},
		{"Bearer abc.def.ghi", "abc.def.ghi"},
		{"bearer   abc  ", "abc"},
		{"Bearer null", ""},
		{"Bearer undefined", ""},
		{"Bearer", ""},
		{"Basic Zm9vOmJhcg==", ""},
		{"Samply tok", ""},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if tc.header != "" {
			r.Header.Set("Authorization", tc.header)
		}
		if got := BearerToken(r); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.header, got, tc.want)
		}
	}
}
