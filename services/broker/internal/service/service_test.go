package service

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"fris.dev/pkg/kv"
	"fris.dev/pkg/rpcerr"
	brokerv1 "fris.dev/proto/broker/v1"
	"fris.dev/services/broker/internal/storage"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// codes remembers what the mailer sent.
type codeBox struct {
	mu   sync.Mutex
	last map[string]string
	fail bool
}

func (b *codeBox) SendActivation(_ context.Context, to, code string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail {
		return errors.New("smtp down")
	}
	b.last[to] = code
	return nil
}

func testConfig(mode string) Config {
	return Config{Name: "T", Registration: mode, ActivationTTL: time.Hour, MaxReplyBytes: 1 << 10, MaxExposeBytes: 1 << 20,
		TokenCacheTTL: 5 * time.Second, ListCacheTTL: time.Second, PublicURL: "http://b/broker/rest/searchbroker"}
}

var testSites = []string{"s1", "s2", "s3", "charite", "dresden"}

// replicas returns n services sharing one store, as replicas share Redis.
func replicas(t *testing.T, n int, mode string) ([]*Service, *clock, *codeBox) {
	db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "b.db"), kv.BoltOptions{Partitions: storage.Partitions})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	c := &clock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	box := &codeBox{last: map[string]string{}}
	var out []*Service
	for range n {
		s := New(testConfig(mode), storage.New(db), box, slog.New(slog.DiscardHandler))
		s.SetClock(c.now)
		out = append(out, s)
	}
	// The sites the tests name are in the registry.
	for _, id := range testSites {
		if _, _, err := out[0].CreateSite(context.Background(), &brokerv1.CreateSiteRequest{Id: id, NameDe: "Standort " + id, NameEn: "Site " + id}); err != nil {
			t.Fatal(err)
		}
	}
	return out, c, box
}

func withAuth(v string) context.Context {
	return metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", v))
}

func code(err error) codes.Code {
	return status.Code(rpcerr.From(context.Background(), slog.New(slog.DiscardHandler), err))
}

func newContent(sites ...string) *brokerv1.InquiryContent {
	return &brokerv1.InquiryContent{Label: "L", Query: `<Query><Where/></Query>`, Contact: &brokerv1.Contact{Lastname: "X"}, TargetSites: sites}
}

func TestCachesAcrossReplicas(t *testing.T) {
	rs, clk, _ := replicas(t, 2, ModeApproval)
	a, b := rs[0], rs[1]
	ctx := context.Background()
	tok, _, err := a.Register(ctx, "bank@site.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (Admin{Service: a}).ApproveBank(ctx, &brokerv1.ApproveBankRequest{Email: "bank@site.example", SiteId: "s1"}); err != nil {
		t.Fatal(err)
	}
	bank := withAuth("Samply " + tok)
	in, err := a.CreateInquiry(ctx, "r1", newContent("s1"))
	if err != nil {
		t.Fatal(err)
	}
	// Replica b builds its list before the release.
	if d, err := b.List(bank); err != nil || strings.Contains(string(d.Body), "<Id>") {
		t.Fatalf("list before release = %s, %v", d.Body, err)
	}
	if _, err := a.ReleaseInquiry(ctx, in.GetId(), ""); err != nil {
		t.Fatal(err)
	}
	// a sees the release at once; b within its list TTL.
	if d, _ := a.List(bank); !strings.Contains(string(d.Body), "<Id>1</Id>") {
		t.Fatalf("releasing replica's list = %s", d.Body)
	}
	if d, _ := b.List(bank); strings.Contains(string(d.Body), "<Id>") {
		t.Fatalf("other replica saw the release before its TTL: %s", d.Body)
	}
	clk.add(time.Second)
	if d, _ := b.List(bank); !strings.Contains(string(d.Body), "<Id>1</Id><Revision>1</Revision>") {
		t.Fatalf("other replica after its TTL = %s", d.Body)
	}
	// Deleted through a: a refuses the token at once, b within the token TTL.
	if err := a.Delete(bank, "bank@site.example"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.List(bank); code(err) != codes.Unauthenticated {
		t.Fatalf("deleting replica: %v", err)
	}
	if _, err := b.List(bank); err != nil {
		t.Fatalf("other replica within the token TTL: %v", err)
	}
	clk.add(5 * time.Second)
	if _, err := b.List(bank); code(err) != codes.Unauthenticated {
		t.Fatalf("other replica after the token TTL: %v", err)
	}
}

func TestListStopsAtExpiry(t *testing.T) {
	rs, clk, _ := replicas(t, 1, ModeApproval)
	s := rs[0]
	ctx := context.Background()
	tok, _, _ := s.Register(ctx, "bank@site.example")
	_, _ = (Admin{Service: s}).ApproveBank(ctx, &brokerv1.ApproveBankRequest{Email: "bank@site.example", SiteId: "s1"})
	c := newContent("s1")
	c.ExpiresAt = timestamppbAt(clk.now().Add(300 * time.Millisecond))
	in, err := s.CreateInquiry(ctx, "r", c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReleaseInquiry(ctx, in.GetId(), "r"); err != nil {
		t.Fatal(err)
	}
	bank := withAuth(tok) // the bare token works too
	if d, _ := s.List(bank); !strings.Contains(string(d.Body), "<Id>1</Id>") {
		t.Fatalf("list = %s", d.Body)
	}
	clk.add(300 * time.Millisecond) // before the list TTL, at the expiry
	if d, _ := s.List(bank); strings.Contains(string(d.Body), "<Id>") {
		t.Fatalf("expired inquiry still listed: %s", d.Body)
	}
	if _, err := s.Part(bank, in.GetId(), brokerv1.InquiryPart_INFO); code(err) != codes.NotFound {
		t.Fatalf("expired inquiry readable: %v", err)
	}
}

func TestActivationCodes(t *testing.T) {
	rs, clk, box := replicas(t, 1, ModeActivationCode)
	s := rs[0]
	ctx := context.Background()
	const email = "Bank@Site.example"
	if _, act, err := s.Register(ctx, email); err != nil || !act {
		t.Fatalf("first PUT = %v, %v", act, err)
	}
	c := box.last["bank@site.example"]
	if len(c) != 8 || strings.Trim(c, "0123456789") != "" {
		t.Fatalf("code %q", c)
	}
	wrong := "00000000"
	if c == wrong {
		wrong = "11111111"
	}
	n := s.cfg.MaxActivationAttempts
	for i := 0; i < n-1; i++ {
		if _, _, err := s.Register(withAuth("SamplyRegistration "+wrong), email); code(err) != codes.Unauthenticated {
			t.Fatalf("wrong code %d: %v", i, err)
		}
	}
	// The n-th wrong code drops the activation: the right one no longer works.
	if _, _, err := s.Register(withAuth("SamplyRegistration "+wrong), email); code(err) != codes.Unauthenticated {
		t.Fatal(err)
	}
	if _, _, err := s.Register(withAuth("SamplyRegistration "+c), email); code(err) != codes.Unauthenticated {
		t.Fatalf("code after %d wrong tries: %v", n, err)
	}
	// A new code, which expires.
	_, _, _ = s.Register(ctx, email)
	c = box.last["bank@site.example"]
	clk.add(time.Hour + time.Second)
	if _, _, err := s.Register(withAuth("SamplyRegistration "+c), email); code(err) != codes.Unauthenticated {
		t.Fatalf("expired code: %v", err)
	}
	_, _, _ = s.Register(ctx, email)
	tok, act, err := s.Register(withAuth("SamplyRegistration "+box.last["bank@site.example"]), email)
	if err != nil || act || len(tok) != 64 {
		t.Fatalf("right code = %q, %v, %v", tok, act, err)
	}
	if _, _, err := s.Register(ctx, email); code(err) != codes.AlreadyExists {
		t.Fatalf("pending again = %v", err)
	}
	box.fail = true
	if _, _, err := s.Register(ctx, "other@site.example"); code(err) != codes.Unavailable {
		t.Fatalf("mail failure = %v", err)
	}
}

func TestRepliesAndRevisions(t *testing.T) {
	rs, _, _ := replicas(t, 1, ModeApproval)
	s := rs[0]
	ctx := context.Background()
	admin := Admin{Service: s}
	banks := map[string]string{}
	for email, site := range map[string]string{"a@x.org": "s1", "b@x.org": "s1", "c@x.org": "s2"} {
		tok, _, err := s.Register(ctx, email)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admin.ApproveBank(ctx, &brokerv1.ApproveBankRequest{Email: email, SiteId: site}); err != nil {
			t.Fatal(err)
		}
		banks[email] = tok
	}
	in, _ := s.CreateInquiry(ctx, "r", newContent("s1", "s2", "s1"))
	if got := in.GetTargetSites(); len(got) != 2 {
		t.Fatalf("duplicate sites kept: %v", got)
	}
	up, err := s.UpdateInquiry(ctx, in.GetId(), "r", newContent("s1", "s2"))
	if err != nil || up.GetRevision() != 1 {
		t.Fatalf("identical update = rev %d, %v", up.GetRevision(), err)
	}
	c := newContent("s1", "s2")
	c.Label = "L2"
	if up, _ = s.UpdateInquiry(ctx, in.GetId(), "r", c); up.GetRevision() != 2 {
		t.Fatalf("changed update = rev %d", up.GetRevision())
	}
	if _, err := s.UpdateInquiry(ctx, in.GetId(), "someone else", c); code(err) != codes.NotFound {
		t.Fatalf("other author's update = %v", err)
	}
	_, _ = s.ReleaseInquiry(ctx, in.GetId(), "r")
	for email, body := range map[string]string{"a@x.org": "4", "b@x.org": `{"count": 6}`, "c@x.org": "not a number"} {
		if err := s.Reply(withAuth("Samply "+banks[email]), in.GetId(), strings.ToUpper(email), []byte(body), "text/plain"); err != nil {
			t.Fatalf("reply of %s: %v", email, err)
		}
	}
	if err := s.Reply(withAuth("Samply "+banks["a@x.org"]), in.GetId(), "b@x.org", []byte("1"), ""); code(err) != codes.Unauthenticated {
		t.Fatalf("reply for another bank = %v", err)
	}
	if err := s.Reply(withAuth("Samply "+banks["a@x.org"]), in.GetId(), "a@x.org", make([]byte, 2<<10), ""); code(err) != codes.ResourceExhausted {
		t.Fatalf("large reply = %v", err)
	}
	res, err := s.Replies(ctx, in.GetId(), "r")
	if err != nil {
		t.Fatal(err)
	}
	if res.GetTotal() != 10 || len(res.GetSites()) != 2 || res.GetSites()[0].GetCount() != 10 || res.GetSites()[0].GetReplies() != 2 ||
		res.GetSites()[1].GetReplies() != 1 || res.GetSites()[1].GetCount() != 0 {
		t.Fatalf("replies = %v", res)
	}
	if _, err := s.CloseInquiry(ctx, in.GetId(), "r"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateInquiry(ctx, in.GetId(), "r", c); code(err) != codes.InvalidArgument {
		t.Fatalf("update of a closed inquiry = %v", err)
	}
}

func timestamppbAt(t time.Time) *timestamppb.Timestamp { return timestamppb.New(t) }
