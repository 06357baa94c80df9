package service

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"fris.dev/pkg/rpcerr"
	brokerv1 "fris.dev/proto/broker/v1"
	"fris.dev/services/broker/internal/storage"
)

// How far an inquiry has got: the broker notes when each site's bank last
// asked for its inquiries and when a site first fetched each inquiry, so a
// researcher can tell a site that has not looked yet from one that is
// still counting.

// pollGrain is how close two polls of a site may be for the second not to
// be written: the researcher's page says minutes, not seconds.
const pollGrain = int64(10 * time.Second)

// polled notes a site's poll. Failing to note it does not fail the poll:
// it is a hint for researchers, the list is what the bank needs.
func (s *Service) polled(ctx context.Context, site string) {
	if err := s.store.SitePolled(ctx, site, s.now().UnixNano(), pollGrain); err != nil {
		s.log.WarnContext(ctx, "broker: noting a site's poll", "site", site, "err", err)
	}
}

// seen notes that a bank of site fetched the inquiry, as polled does.
func (s *Service) seen(ctx context.Context, inquiry, site string) {
	if site == "" {
		return
	}
	if err := s.store.InquirySeen(ctx, inquiry, site, s.now().UnixNano()); err != nil {
		s.log.WarnContext(ctx, "broker: noting an inquiry fetched", "inquiry", inquiry, "site", site, "err", err)
	}
}

// Reach is, per target site of an inquiry of author, when its bank last
// polled and when it first fetched the inquiry.
func (s *Service) Reach(ctx context.Context, id, author string) (*brokerv1.InquiryReach, error) {
	in, err := s.owned(ctx, id, author)
	if err != nil {
		return nil, err
	}
	polls, err := s.store.SitePolls(ctx)
	if err != nil {
		return nil, err
	}
	seen, err := s.store.InquirySeenBy(ctx, in.GetId())
	if err != nil {
		return nil, err
	}
	out := &brokerv1.InquiryReach{InquiryId: in.GetId(), Sites: []*brokerv1.SiteReach{}}
	for _, site := range in.GetTargetSites() {
		r := &brokerv1.SiteReach{SiteId: site}
		if at := polls[site]; at != 0 {
			r.LastPollAt = timestamppb.New(unixNano(at))
		}
		if at := seen[site]; at != 0 {
			r.SeenAt = timestamppb.New(unixNano(at))
			out.Seen++
		}
		out.Sites = append(out.Sites, r)
	}
	return out, nil
}

// InquiryExpose is the expose of an inquiry of author.
func (s *Service) InquiryExpose(ctx context.Context, id, author string) (Document, error) {
	in, err := s.owned(ctx, id, author)
	if err != nil {
		return Document{}, err
	}
	if in.GetExpose() == nil {
		return Document{}, rpcerr.New(storage.ErrNotFound, "inquiry %s has no expose", id)
	}
	return s.exposeDoc(ctx, in.GetExpose().GetId())
}
