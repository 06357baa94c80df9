package service

import (
	"bytes"
	"context"
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"fris.dev/pkg/rpcerr"
	brokerv1 "fris.dev/proto/broker/v1"
	"fris.dev/services/broker/internal/reply"
	"fris.dev/services/broker/internal/storage"
	"fris.dev/services/broker/internal/strata"
	"fris.dev/services/broker/internal/suppress"
)

// Reply stores the calling bank's reply to an inquiry.
func (s *Service) Reply(ctx context.Context, id, email string, body []byte, contentType string) error {
	b, err := s.caller(ctx)
	if err != nil {
		return err
	}
	if !strings.EqualFold(strings.TrimSpace(email), b.Email) {
		return rpcerr.New(rpcerr.ErrUnauthenticated, "the token does not belong to %s", email)
	}
	if len(body) > s.cfg.MaxReplyBytes {
		return rpcerr.New(rpcerr.ErrTooLarge, "reply larger than %d bytes", s.cfg.MaxReplyBytes)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return rpcerr.New(rpcerr.ErrInvalid, "the reply is empty")
	}
	if err := checkID("inquiry", id); err != nil {
		return err
	}
	text, err := reply.Decode(body, contentType)
	if err != nil {
		return rpcerr.New(rpcerr.ErrInvalid, "%v", err)
	}
	in, err := s.store.Inquiry(ctx, id)
	if errors.Is(err, storage.ErrNotFound) || (err == nil && !visibleTo(in, b, s.now())) {
		return errNoInquiry(id)
	}
	if err != nil {
		return err
	}
	r := storage.Reply{InquiryID: id, BankEmail: b.Email, SiteID: b.SiteID, Body: text, ContentType: contentType, ReceivedAt: s.now().UnixNano()}
	if n, ok := reply.Count(text); ok {
		r.Count = &n
	}
	if err := s.store.PutReply(ctx, r); err != nil {
		return err
	}
	if err := s.store.SiteReplied(ctx, b.SiteID, r.ReceivedAt); err != nil {
		// The reply is stored; only the site's "last replied" lags.
		s.log.WarnContext(ctx, "recording the site's last reply failed", "site", b.SiteID, "err", err)
	}
	s.watchers.notify(id)
	s.log.InfoContext(ctx, "reply stored", "inquiry", id, "bank", b.Email, "site", b.SiteID, "count", countAttr(r.Count))
	return nil
}

func countAttr(c *int32) string {
	if c == nil {
		return "unreadable"
	}
	return strconv.Itoa(int(*c))
}

// Replies returns an inquiry's replies with per-site and summed counts.
func (s *Service) Replies(ctx context.Context, id, author string) (*brokerv1.ListRepliesResponse, error) {
	if _, err := s.owned(ctx, id, author); err != nil {
		return nil, err
	}
	rs, err := s.store.Replies(ctx, id)
	if err != nil {
		return nil, err
	}
	res := &brokerv1.ListRepliesResponse{InquiryId: id, Replies: []*brokerv1.Reply{}, Sites: []*brokerv1.SiteCount{}}
	sites := map[string]*brokerv1.SiteCount{}
	for _, r := range rs {
		// Read from the body, not the stored count: records written before
		// the broker knew unreadable replies read the same way.
		p := s.parsed.parse(r)
		out := &brokerv1.Reply{
			BankEmail: r.BankEmail, SiteId: r.SiteID, Body: r.Body, ContentType: r.ContentType,
			ReceivedAt: timestamppb.New(unixNano(r.ReceivedAt)),
			Unreadable: !p.Readable(), Donor: entityOf(p.Donor), Sample: entityOf(p.Sample),
		}
		if p.Readable() {
			// A copy: the memo's result is shared.
			out.Count = proto.Int32(*p.Count)
		}
		res.Replies = append(res.Replies, out)
		sc := sites[r.SiteID]
		if sc == nil {
			sc = &brokerv1.SiteCount{SiteId: r.SiteID}
			sites[r.SiteID] = sc
			res.Sites = append(res.Sites, sc)
		}
		sc.Replies++
		if !p.Readable() {
			sc.Unreadable++
			res.Unreadable++
			continue
		}
		sc.Count = addCount(sc.Count, *p.Count)
		res.Total = addCount(res.Total, *p.Count)
		if p.Sample != nil {
			sc.Samples = proto.Int32(addCount(sc.GetSamples(), p.Sample.Count))
			res.Samples = proto.Int32(addCount(res.GetSamples(), p.Sample.Count))
		}
	}
	sort.Slice(res.Sites, func(i, j int) bool { return res.Sites[i].SiteId < res.Sites[j].SiteId })
	return res, nil
}

// ResearcherReplies are Replies as a researcher may see them: counts below
// the min count hidden, sums of the counts shown.
func (s *Service) ResearcherReplies(ctx context.Context, id, author string) (*brokerv1.ListRepliesResponse, error) {
	res, err := s.Replies(ctx, id, author)
	if err != nil {
		return nil, err
	}
	return strata.Sum(suppress.Hide(res, s.cfg.MinCount)), nil
}

// OperatorReplies are Replies exact, with what the rule hides from
// researchers marked.
func (s *Service) OperatorReplies(ctx context.Context, id string) (*brokerv1.ListRepliesResponse, error) {
	res, err := s.Replies(ctx, id, "")
	if err != nil {
		return nil, err
	}
	return strata.Sum(suppress.Mark(res, s.cfg.MinCount)), nil
}

// addCount sums counts, stopping at the largest int32 rather than wrapping
// to a negative number.
func addCount(a, b int32) int32 {
	if s := int64(a) + int64(b); s <= math.MaxInt32 {
		return int32(s)
	}
	return math.MaxInt32
}

// entityOf is a Reply document's entity as the API carries it.
func entityOf(e *reply.Entity) *brokerv1.ReplyEntity {
	if e == nil {
		return nil
	}
	out := &brokerv1.ReplyEntity{Label: e.Label, Count: e.Count}
	for _, st := range e.Stratifications {
		ps := &brokerv1.Stratification{Title: st.Title}
		for _, r := range st.Strata {
			ps.Strata = append(ps.Strata, &brokerv1.Stratum{Label: r.Label, Count: r.Count})
		}
		out.Stratifications = append(out.Stratifications, ps)
	}
	return out
}

// maxParsed and maxParsedBytes (of the bodies parsed) bound the parse
// memo; past either it starts again. A parsed document takes a few times
// its body's size.
const (
	maxParsed      = 4096
	maxParsedBytes = 32 << 20
)

// parseMemo keeps reply.Parse's result for a stored reply. A stored reply
// never changes: a new PUT writes a new one with a new time, so the key
// needs no body. Reading a 1 MiB Reply document takes tens of
// milliseconds, and every open watch re-reads its inquiry's replies every
// WatchInterval.
type parseMemo struct {
	mu    sync.Mutex
	m     map[parseKey]reply.Result
	bytes int
}

type parseKey struct {
	inquiry, bank string
	at            int64
	size          int
}

func (p *parseMemo) parse(r storage.Reply) reply.Result {
	k := parseKey{r.InquiryID, r.BankEmail, r.ReceivedAt, len(r.Body)}
	p.mu.Lock()
	res, ok := p.m[k]
	p.mu.Unlock()
	if ok {
		return res
	}
	res = reply.Parse(r.Body)
	p.mu.Lock()
	if p.m == nil || len(p.m) >= maxParsed || p.bytes+len(r.Body) > maxParsedBytes {
		p.m, p.bytes = make(map[parseKey]reply.Result), 0
	}
	p.m[k] = res
	p.bytes += len(r.Body)
	p.mu.Unlock()
	return res
}
