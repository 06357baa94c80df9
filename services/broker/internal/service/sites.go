package service

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"fris.dev/pkg/rpcerr"
	brokerv1 "fris.dev/proto/broker/v1"
	"fris.dev/services/broker/internal/storage"
)

// The site registry: banks, inquiries and (through the admin API) upload
// credentials name a site that is in it, so a typo is refused where it is
// made instead of becoming a site nobody answers for.

// maxSiteText bounds a display name or a contact.
const maxSiteText = 200

func checkSiteText(field, v string, required bool) error {
	switch {
	case v == "" && required:
		return rpcerr.New(rpcerr.ErrInvalid, "%s is required", field)
	case len(v) > maxSiteText || v != "" && !printable(v):
		return rpcerr.New(rpcerr.ErrInvalid, "%s must be at most %d bytes of printable UTF-8", field, maxSiteText)
	}
	return nil
}

// maxLogoURL bounds a logo URL.
const maxLogoURL = 2000

// checkLogoURL admits an absolute https URL: the Explorer is served over
// https, so an http logo would be mixed content, and a URL with
// credentials would hand them to every reader.
func checkLogoURL(v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || len(v) > maxLogoURL || !printable(v) || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return rpcerr.New(rpcerr.ErrInvalid, "logo_url %.80q must be an absolute https URL of at most %d bytes", v, maxLogoURL)
	}
	return nil
}

// checkSiteRecord validates a site's fields; a missing display name falls
// back to the other language's. storedLogo is the logo URL the site has:
// kept unchanged, it is not checked again (registries from before logos
// had to be https keep theirs until an operator changes it).
func checkSiteRecord(site *storage.Site, storedLogo string) error {
	site.NameDE, site.NameEN = strings.TrimSpace(site.NameDE), strings.TrimSpace(site.NameEN)
	site.Contact, site.LogoURL = strings.TrimSpace(site.Contact), strings.TrimSpace(site.LogoURL)
	if site.NameDE == "" {
		site.NameDE = site.NameEN
	}
	if site.NameEN == "" {
		site.NameEN = site.NameDE
	}
	return errors.Join(checkSiteText("name_de or name_en", site.NameDE, true), checkSiteText("name_en", site.NameEN, true),
		checkSiteText("contact", site.Contact, false), checkNewLogo(site.LogoURL, storedLogo))
}

func checkNewLogo(v, stored string) error {
	if v != "" && v == stored {
		return nil
	}
	return checkLogoURL(v)
}

// CreateSite adds a site; with ifMissing an existing one is returned
// unchanged (existed).
func (s *Service) CreateSite(ctx context.Context, r *brokerv1.CreateSiteRequest) (*brokerv1.Site, bool, error) {
	site := storage.Site{ID: trimmed(r.GetId()), NameDE: r.GetNameDe(), NameEN: r.GetNameEn(), Contact: r.GetContact(), LogoURL: r.GetLogoUrl(), CreatedAt: s.now().Unix()}
	if err := CheckSite(site.ID); err != nil {
		return nil, false, err
	}
	if err := checkSiteRecord(&site, ""); err != nil {
		return nil, false, err
	}
	err := s.store.CreateSite(ctx, site)
	if errors.Is(err, storage.ErrExists) {
		if r.GetIfMissing() {
			old, err := s.site(ctx, site.ID)
			return old, true, err
		}
		return nil, false, rpcerr.New(storage.ErrExists, "site %s exists already", site.ID)
	}
	if err != nil {
		return nil, false, err
	}
	s.log.InfoContext(ctx, "site created", "site", site.ID, "name_de", site.NameDE, "name_en", site.NameEN)
	out, err := s.site(ctx, site.ID)
	return out, false, err
}

// UpdateSite changes the fields r sets.
func (s *Service) UpdateSite(ctx context.Context, r *brokerv1.UpdateSiteRequest) (*brokerv1.Site, error) {
	id := trimmed(r.GetId())
	if err := CheckSite(id); err != nil {
		return nil, err
	}
	_, err := s.store.UpdateSite(ctx, id, func(site *storage.Site) error {
		stored := site.LogoURL
		if r.NameDe != nil {
			site.NameDE = r.GetNameDe()
		}
		if r.NameEn != nil {
			site.NameEN = r.GetNameEn()
		}
		if r.Contact != nil {
			site.Contact = r.GetContact()
		}
		if r.LogoUrl != nil {
			site.LogoURL = r.GetLogoUrl()
		}
		return checkSiteRecord(site, stored)
	})
	if err != nil {
		return nil, notFound(err, "no site %s", id)
	}
	s.log.InfoContext(ctx, "site updated", "site", id)
	return s.site(ctx, id)
}

// site is one site with its banks' state.
func (s *Service) site(ctx context.Context, id string) (*brokerv1.Site, error) {
	if err := CheckSite(id); err != nil {
		return nil, err
	}
	sites, err := s.Sites(ctx)
	if err != nil {
		return nil, err
	}
	for _, site := range sites {
		if site.GetId() == id {
			return site, nil
		}
	}
	return nil, rpcerr.New(storage.ErrNotFound, "no site %s", id)
}

// Sites is every site of the registry, by id, with whether an active bank
// is linked to it: the sites an inquiry can target.
func (s *Service) Sites(ctx context.Context) ([]*brokerv1.Site, error) {
	sites, err := s.store.Sites(ctx)
	if err != nil {
		return nil, err
	}
	banks, err := s.store.Banks(ctx)
	if err != nil {
		return nil, err
	}
	active := map[string]bool{}
	for _, b := range banks {
		if approved(b) {
			active[b.SiteID] = true
		}
	}
	out := make([]*brokerv1.Site, 0, len(sites))
	for _, site := range sites {
		m := &brokerv1.Site{Id: site.ID, NameDe: site.NameDE, NameEn: site.NameEN, Contact: site.Contact, LogoUrl: site.LogoURL,
			HasActiveBank: active[site.ID], CreatedAt: timestamppb.New(time.Unix(site.CreatedAt, 0))}
		if site.LastReplyAt != 0 {
			m.LastReplyAt = timestamppb.New(unixNano(site.LastReplyAt))
		}
		out = append(out, m)
	}
	return out, nil
}

// requireSites refuses ids the registry does not hold, naming them all.
func (s *Service) requireSites(ctx context.Context, ids ...string) error {
	var unknown []string
	for _, id := range ids {
		if _, err := s.store.Site(ctx, id); errors.Is(err, storage.ErrNotFound) {
			if !slices.Contains(unknown, id) {
				unknown = append(unknown, id)
			}
		} else if err != nil {
			return err
		}
	}
	switch len(unknown) {
	case 0:
		return nil
	case 1:
		return rpcerr.New(rpcerr.ErrInvalid, "unknown site %q: it is not in the site registry (an operator adds it in the Explorer's site registry view or with `broker create-site`)", unknown[0])
	}
	return rpcerr.New(rpcerr.ErrInvalid, "unknown sites %q: they are not in the site registry (an operator adds them in the Explorer's site registry view or with `broker create-site`)", unknown)
}

// MigrateSites puts the sites banks are linked to into the registry, named
// by their ids, so a deployment from before the registry keeps working.
func (s *Service) MigrateSites(ctx context.Context) error {
	banks, err := s.store.Banks(ctx)
	if err != nil {
		return err
	}
	for _, b := range banks {
		if b.SiteID == "" {
			continue
		}
		_, existed, err := s.CreateSite(ctx, &brokerv1.CreateSiteRequest{Id: b.SiteID, NameDe: b.SiteID, NameEn: b.SiteID, IfMissing: true})
		if err != nil {
			return err
		}
		if !existed {
			s.log.InfoContext(ctx, "site registry: added the site a bank names", "site", b.SiteID, "bank", b.Email)
		}
	}
	return nil
}

func sitesResponse(sites []*brokerv1.Site) *brokerv1.ListSitesResponse {
	res := &brokerv1.ListSitesResponse{Sites: sites, SiteIds: make([]string, 0, len(sites))}
	for _, site := range sites {
		res.SiteIds = append(res.SiteIds, site.GetId())
	}
	return res
}

// ListSites is every site of the network, for the researcher's inquiry.
func (r Researcher) ListSites(ctx context.Context, _ *brokerv1.ListSitesRequest) (*brokerv1.ListSitesResponse, error) {
	if _, err := r.subject(ctx); err != nil {
		return nil, r.err(ctx, err)
	}
	sites, err := r.Sites(ctx)
	if err != nil {
		return nil, r.err(ctx, err)
	}
	return sitesResponse(sites), nil
}

func (a Admin) ListSites(ctx context.Context, _ *brokerv1.ListSitesRequest) (*brokerv1.ListSitesResponse, error) {
	sites, err := a.Sites(ctx)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	return sitesResponse(sites), nil
}

func (a Admin) GetSite(ctx context.Context, r *brokerv1.GetSiteRequest) (*brokerv1.Site, error) {
	site, err := a.site(ctx, trimmed(r.GetId()))
	return site, a.err(ctx, err)
}

func (a Admin) CreateSite(ctx context.Context, r *brokerv1.CreateSiteRequest) (*brokerv1.Site, error) {
	site, _, err := a.Service.CreateSite(ctx, r)
	return site, a.err(ctx, err)
}

func (a Admin) UpdateSite(ctx context.Context, r *brokerv1.UpdateSiteRequest) (*brokerv1.Site, error) {
	site, err := a.Service.UpdateSite(ctx, r)
	return site, a.err(ctx, err)
}
