// Package storagetest is the broker store's conformance suite, run against
// every backend.
package storagetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	brokerv1 "fris.dev/proto/broker/v1"
	"fris.dev/services/broker/internal/monitoring"
	"fris.dev/services/broker/internal/storage"
)

// Run runs the suite; open returns a fresh, empty store for each case,
// which runs as a subtest of its name.
func Run(t *testing.T, open func(t *testing.T) storage.Store) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, s storage.Store)
	}{
		{"Banks", testBanks},
		{"Activations", testActivations},
		{"InquiriesAndExposes", testInquiriesAndExposes},
		{"Replies", testReplies},
		{"Reports", testReports},
		{"Sites", testSites},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

func testBanks(t *testing.T, s storage.Store) {
	ctx := context.Background()
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	a := storage.Bank{Email: "a@x.org", TokenHash: "h1", Status: storage.BankPending, RegisteredAt: 1}
	if err := s.CreateBank(ctx, a); err != nil {
		t.Fatal(err)
	}
	for _, dup := range []storage.Bank{{Email: "a@x.org", TokenHash: "h9"}, {Email: "b@x.org", TokenHash: "h1"}} {
		if err := s.CreateBank(ctx, dup); !errors.Is(err, storage.ErrExists) {
			t.Fatalf("CreateBank(%v) = %v, want ErrExists", dup, err)
		}
	}
	if _, err := s.Bank(ctx, "b@x.org"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a refused bank was stored: %v", err)
	}
	if got, err := s.BankByToken(ctx, "h1"); err != nil || got != a {
		t.Fatalf("BankByToken = %+v, %v", got, err)
	}
	if _, err := s.BankByToken(ctx, "h2"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unknown token: %v", err)
	}
	up, err := s.UpdateBank(ctx, "a@x.org", func(b *storage.Bank) error {
		b.Status, b.SiteID, b.ApprovedAt = storage.BankActive, "charite", 2
		return nil
	})
	if err != nil || up.SiteID != "charite" {
		t.Fatalf("UpdateBank = %+v, %v", up, err)
	}
	boom := errors.New("boom")
	if _, err := s.UpdateBank(ctx, "a@x.org", func(b *storage.Bank) error { b.SiteID = "x"; return boom }); !errors.Is(err, boom) {
		t.Fatalf("UpdateBank error = %v", err)
	}
	if got, _ := s.Bank(ctx, "a@x.org"); got.SiteID != "charite" || got.Status != storage.BankActive {
		t.Fatalf("failed update changed the bank: %+v", got)
	}
	if _, err := s.UpdateBank(ctx, "nobody@x.org", func(*storage.Bank) error { return nil }); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("UpdateBank unknown = %v", err)
	}
	bankDeletion(t, s)
}

// bankDeletion is the second half of Banks: on the store it left (a@x.org
// active, b@x.org refused), a second bank, the list, and deletion.
func bankDeletion(t *testing.T, s storage.Store) {
	t.Helper()
	ctx := context.Background()
	if err := s.CreateBank(ctx, storage.Bank{Email: "b@x.org", TokenHash: "h2", Status: storage.BankPending}); err != nil {
		t.Fatal(err)
	}
	all, err := s.Banks(ctx)
	if err != nil || len(all) != 2 || all[0].Email != "a@x.org" || all[1].Email != "b@x.org" {
		t.Fatalf("Banks = %+v, %v", all, err)
	}
	if err := s.DeleteBank(ctx, "a@x.org"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BankByToken(ctx, "h1"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("deleted bank's token still works: %v", err)
	}
	if err := s.DeleteBank(ctx, "a@x.org"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second delete = %v", err)
	}
	// The email is free again, with a new token; the old one stays dead.
	if err := s.CreateBank(ctx, storage.Bank{Email: "a@x.org", TokenHash: "h3", Status: storage.BankPending}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BankByToken(ctx, "h1"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("old token of a re-registered email: %v", err)
	}
}

func testActivations(t *testing.T, s storage.Store) {
	ctx := context.Background()
	a := storage.Activation{Email: "a@x.org", CodeHash: "c1", Created: 1}
	if err := s.PutActivation(ctx, a, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Activation(ctx, "a@x.org"); err != nil || got != a {
		t.Fatalf("Activation = %+v, %v", got, err)
	}
	a.Attempts = 2
	if err := s.UpdateActivation(ctx, a, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Activation(ctx, "a@x.org"); got.Attempts != 2 {
		t.Fatalf("attempts = %d", got.Attempts)
	}
	// A new code replaces the old; an update about the old one conflicts.
	if err := s.PutActivation(ctx, storage.Activation{Email: "a@x.org", CodeHash: "c2"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateActivation(ctx, a, time.Hour); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("stale update = %v", err)
	}
	// Creating the bank consumes the activation.
	if err := s.CreateBank(ctx, storage.Bank{Email: "a@x.org", TokenHash: "t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Activation(ctx, "a@x.org"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("activation after registration: %v", err)
	}
	if err := s.PutActivation(ctx, storage.Activation{Email: "b@x.org", CodeHash: "c"}, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	if _, err := s.Activation(ctx, "b@x.org"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("expired activation: %v", err)
	}
	if err := s.PutActivation(ctx, storage.Activation{Email: "c@x.org", CodeHash: "c"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteActivation(ctx, "c@x.org"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Activation(ctx, "c@x.org"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("deleted activation: %v", err)
	}
}

func testInquiriesAndExposes(t *testing.T, s storage.Store) {
	ctx := context.Background()
	pdf := []byte("%PDF-1.4 one")
	first, err := s.CreateInquiry(ctx, &brokerv1.Inquiry{Id: "ignored", Revision: 1, Label: "one", TargetSites: []string{"a"}},
		&storage.NewExpose{Filename: "one.pdf", Data: pdf})
	if err != nil {
		t.Fatal(err)
	}
	if first.GetId() != "1" || first.GetExpose().GetId() == "" || first.GetExpose().GetSizeBytes() != int32(len(pdf)) {
		t.Fatalf("created = %v", first)
	}
	e, err := s.Expose(ctx, first.GetExpose().GetId())
	if err != nil || string(e.Data) != string(pdf) || e.InquiryID != "1" || e.Filename != "one.pdf" {
		t.Fatalf("Expose = %+v, %v", e, err)
	}
	// Eleven more: ids are numbers and list in numeric order.
	for i := 2; i <= 12; i++ {
		in, err := s.CreateInquiry(ctx, &brokerv1.Inquiry{Revision: 1, Label: fmt.Sprint(i)}, nil)
		if err != nil || in.GetId() != fmt.Sprint(i) || in.GetExpose() != nil {
			t.Fatalf("create %d = %v, %v", i, in, err)
		}
	}
	all, err := s.Inquiries(ctx)
	if err != nil || len(all) != 12 || all[1].GetId() != "2" || all[9].GetId() != "10" {
		t.Fatalf("Inquiries: %d, %v", len(all), err)
	}
	up, err := s.UpdateInquiry(ctx, "1", func(in *brokerv1.Inquiry) (*storage.NewExpose, error) {
		in.Revision++
		in.Label = "one, revised"
		return &storage.NewExpose{Filename: "two.pdf", Data: []byte("%PDF-1.4 two")}, nil
	})
	if err != nil || up.GetRevision() != 2 || up.GetExpose().GetId() == first.GetExpose().GetId() {
		t.Fatalf("UpdateInquiry = %v, %v", up, err)
	}
	if _, err := s.Expose(ctx, first.GetExpose().GetId()); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("replaced expose still stored: %v", err)
	}
	if got, err := s.Inquiry(ctx, "1"); err != nil || got.GetLabel() != "one, revised" || got.GetExpose().GetFilename() != "two.pdf" {
		t.Fatalf("Inquiry = %v, %v", got, err)
	}
	// Without a new expose the old one stays; an error changes nothing.
	if _, err := s.UpdateInquiry(ctx, "1", func(in *brokerv1.Inquiry) (*storage.NewExpose, error) { in.Label = "x"; return nil, nil }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if _, err := s.UpdateInquiry(ctx, "1", func(in *brokerv1.Inquiry) (*storage.NewExpose, error) { in.Label = "y"; return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("failing update = %v", err)
	}
	if got, _ := s.Inquiry(ctx, "1"); got.GetLabel() != "x" || got.GetExpose().GetFilename() != "two.pdf" {
		t.Fatalf("after updates: %v", got)
	}
	if _, err := s.Inquiry(ctx, "99"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unknown inquiry: %v", err)
	}
	if _, err := s.UpdateInquiry(ctx, "99", func(*brokerv1.Inquiry) (*storage.NewExpose, error) { return nil, nil }); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("update unknown inquiry: %v", err)
	}
}

func testReplies(t *testing.T, s storage.Store) {
	ctx := context.Background()
	n := int32(5)
	r := storage.Reply{InquiryID: "1", BankEmail: "a@x.org", SiteID: "charite", Body: "5", Count: &n, ReceivedAt: 1}
	if err := s.PutReply(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Body, r.Count = `{"weird":true}`, nil
	if err := s.PutReply(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := s.PutReply(ctx, storage.Reply{InquiryID: "1", BankEmail: "b@x.org", SiteID: "dresden", Body: "7", Count: &n}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutReply(ctx, storage.Reply{InquiryID: "10", BankEmail: "a@x.org", Body: "1"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Replies(ctx, "1")
	if err != nil || len(got) != 2 {
		t.Fatalf("Replies = %+v, %v", got, err)
	}
	if got[0].BankEmail != "a@x.org" || got[0].Body != `{"weird":true}` || got[0].Count != nil {
		t.Fatalf("overwritten reply = %+v", got[0])
	}
	if got[1].Count == nil || *got[1].Count != 5 {
		t.Fatalf("count = %v", got[1].Count)
	}
	if none, err := s.Replies(ctx, "2"); err != nil || len(none) != 0 {
		t.Fatalf("Replies(2) = %v, %v", none, err)
	}
}

func testReports(t *testing.T, s storage.Store) {
	ctx := context.Background()
	r := storage.Report{BankEmail: "a@x.org", SiteID: "charite", ReceivedAt: 1, Items: []monitoring.Item{{ParameterName: "p", StatusText: "ok", ExitStatus: "0"}}}
	if err := s.PutReport(ctx, r); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("report of an unknown bank = %v, want ErrNotFound", err)
	}
	for _, b := range []storage.Bank{{Email: "a@x.org", TokenHash: "h1"}, {Email: "b@x.org", TokenHash: "h2"}} {
		if err := s.CreateBank(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutReport(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.ReceivedAt, r.Items = 2, []monitoring.Item{{ParameterName: "q"}}
	if err := s.PutReport(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := s.PutReport(ctx, storage.Report{BankEmail: "b@x.org", ReceivedAt: 3}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Reports(ctx)
	if err != nil || len(got) != 2 || got[0].BankEmail != "a@x.org" || got[0].ReceivedAt != 2 || len(got[0].Items) != 1 || got[0].Items[0].ParameterName != "q" {
		t.Fatalf("Reports = %+v, %v", got, err)
	}
	if err := s.DeleteBank(ctx, "a@x.org"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Reports(ctx); err != nil || len(got) != 1 || got[0].BankEmail != "b@x.org" {
		t.Fatalf("after deleting the bank: %+v, %v", got, err)
	}
}
