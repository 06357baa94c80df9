package service

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/identity"
	brokerv1 "fris.dev/proto/broker/v1"
)

func TestAuditEvents(t *testing.T) {
	rs, _, box := replicas(t, 1, ModeActivationCode)
	var buf bytes.Buffer
	s := rs[0]
	s.cfg.Audit = audit.New(&buf, "broker")
	pub := Public{Service: s}
	ctx := context.Background()
	const email = "bank@site.example"

	if _, err := pub.RegisterBank(ctx, &brokerv1.RegisterBankRequest{Email: email}); err != nil {
		t.Fatal(err)
	}
	code := box.last[email]
	_, _ = pub.RegisterBank(withAuth("SamplyRegistration 99999999"), &brokerv1.RegisterBankRequest{Email: email})
	res, err := pub.RegisterBank(withAuth("SamplyRegistration "+code), &brokerv1.RegisterBankRequest{Email: email})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = pub.DeleteBank(withAuth("Samply wrong"), &brokerv1.DeleteBankRequest{Email: email})
	if _, err := pub.DeleteBank(withAuth("Samply "+res.GetToken()), &brokerv1.DeleteBankRequest{Email: email}); err != nil {
		t.Fatal(err)
	}
	researcher := identity.Identity{Subject: "7", Scopes: []string{identity.ScopeResearcher}}
	rctx := metadata.NewIncomingContext(ctx, metadata.Pairs(researcher.Pairs()...))
	r := Researcher{Service: s}
	in, err := r.CreateInquiry(rctx, &brokerv1.CreateInquiryRequest{Content: newContent("charite")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReleaseInquiry(rctx, &brokerv1.ReleaseInquiryRequest{Id: in.GetId()}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.GetInquiry(rctx, &brokerv1.GetInquiryRequest{Id: in.GetId()}); err != nil {
		t.Fatal(err)
	}

	want := []struct{ action, actor, target, outcome string }{
		{"broker.bank.register", "anonymous", email, audit.Success},
		{"broker.bank.register", "anonymous", email, audit.Failure},
		{"broker.bank.register", "anonymous", email, audit.Success},
		{"broker.bank.delete", "anonymous", email, audit.Failure},
		{"broker.bank.delete", "bank:" + email, email, audit.Success},
		{"broker.inquiry.create", "7", in.GetId(), audit.Success},
		{"broker.inquiry.release", "7", in.GetId(), audit.Success},
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d events, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, w := range want {
		var g map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &g); err != nil {
			t.Fatal(err)
		}
		if g["action"] != w.action || g["actor"] != w.actor || g["target"] != w.target || g["outcome"] != w.outcome {
			t.Errorf("event %d = %v, want %+v", i, g, w)
		}
	}
	for _, secret := range []string{code, res.GetToken()} {
		if strings.Contains(buf.String(), secret) {
			t.Fatalf("the audit log holds %q", secret)
		}
	}
}
