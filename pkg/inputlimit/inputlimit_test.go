package inputlimit

import (
	"errors"
	"strings"
	"testing"

	"fris.dev/pkg/rpcerr"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name    string
		fields  []Field
		wantErr string // "" = accepted
	}{
		{"none", nil, ""},
		{"at the limit", []Field{F("name", strings.Repeat("x", Name), Name)}, ""},
		{"one over", []Field{F("name", strings.Repeat("x", Name+1), Name)}, "name is longer than 256 bytes (257 sent)"},
		{"bytes, not runes", []Field{F("name", strings.Repeat("é", 129), Name)}, "name is longer than 256 bytes (258 sent)"},
		{"first offender named", []Field{F("email", "a@b.example", Email), F("description", strings.Repeat("d", Description+5), Description), F("name", strings.Repeat("n", 999), Name)}, "description is longer than 4096 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.fields...)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("Check = %v, want %q", err, c.wantErr)
			}
			if !errors.Is(err, rpcerr.ErrInvalid) {
				t.Fatalf("Check = %v, not of kind ErrInvalid (400)", err)
			}
		})
	}
}

func TestEach(t *testing.T) {
	if err := Each("scope", []string{"a", "b"}, 1); err != nil {
		t.Fatal(err)
	}
	if err := Each("scope", []string{"a", "bb"}, 1); err == nil || !strings.Contains(err.Error(), "scope is longer than 1 bytes") {
		t.Fatalf("Each = %v", err)
	}
}
