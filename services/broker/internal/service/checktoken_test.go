package service

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
)

// CheckToken admits a bank's token as a reply or a report would, before
// any body: any bank's, or the one a path names.
func TestCheckToken(t *testing.T) {
	rs, _, _ := replicas(t, 1, ModeApproval)
	s := rs[0]
	tok, _, err := s.Register(context.Background(), "a@x.org")
	if err != nil {
		t.Fatal(err)
	}
	bank := withAuth("Samply " + tok)
	for _, email := range []string{"", "a@x.org", " A@X.org"} {
		if err := s.CheckToken(bank, email); err != nil {
			t.Fatalf("the bank's own token for %q: %v", email, err)
		}
	}
	for name, c := range map[string]struct {
		ctx   context.Context
		email string
	}{
		"no token":            {context.Background(), ""},
		"unknown token":       {withAuth("Samply not-a-token"), ""},
		"another bank's path": {bank, "b@x.org"},
	} {
		if err := s.CheckToken(c.ctx, c.email); code(err) != codes.Unauthenticated {
			t.Errorf("%s = %v, want Unauthenticated", name, err)
		}
	}
}
