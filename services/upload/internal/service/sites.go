package service

import (
	"context"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/rpcerr"
	brokerv1 "fris.dev/proto/broker/v1"
)

// Sites is the site registry, which the broker owns (docs/decisions.md,
// "The broker owns the site registry").
type Sites interface {
	// Check is nil when the site is in the registry, an InvalidArgument
	// error naming it when it is not.
	Check(ctx context.Context, id string) error
	// Ensure puts the sites into the registry, named by their ids, unless
	// they are in it.
	Ensure(ctx context.Context, ids []string) error
}

// BrokerSites asks the broker's admin API, which admits upload's
// certificate to GetSite and CreateSite.
type BrokerSites struct {
	Client brokerv1.BrokerAdminClient
}

func (b BrokerSites) Check(ctx context.Context, id string) error {
	_, err := b.Client.GetSite(ctx, &brokerv1.GetSiteRequest{Id: id})
	switch status.Code(err) {
	case codes.OK:
		return nil
	case codes.NotFound, codes.InvalidArgument:
		return rpcerr.New(rpcerr.ErrInvalid, "unknown site %q: it is not in the site registry (an operator adds it with `broker create-site`)", id)
	}
	return rpcerr.Errorf(codes.Unavailable, "the site registry (broker) could not be asked about site %q (%s); try again later", id, status.Convert(err).Message())
}

func (b BrokerSites) Ensure(ctx context.Context, ids []string) error {
	for _, id := range ids {
		if _, err := b.Client.CreateSite(ctx, &brokerv1.CreateSiteRequest{Id: id, NameDe: id, NameEn: id, IfMissing: true}); err != nil {
			return err
		}
	}
	return nil
}

// MigrateSites puts the sites today's credentials name into the registry,
// so a deployment from before it keeps working; a no-op without one.
func (s *Service) MigrateSites(ctx context.Context) error {
	if s.cfg.Sites == nil {
		return nil
	}
	creds, err := s.store.Credentials(ctx)
	if err != nil {
		return err
	}
	var ids []string
	for _, c := range creds {
		if !slices.Contains(ids, c.Teiler.SiteID) {
			ids = append(ids, c.Teiler.SiteID)
		}
	}
	if err := s.cfg.Sites.Ensure(ctx, ids); err != nil {
		return err
	}
	s.log.InfoContext(ctx, "site registry: the sites of the credentials are in it", "sites", len(ids))
	return nil
}
