package service

import (
	"bytes"
	"context"
	"errors"
	"net/mail"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"fris.dev/pkg/inputlimit"
	"fris.dev/pkg/rpcerr"
	"fris.dev/pkg/samplyquery"
	brokerv1 "fris.dev/proto/broker/v1"
	"fris.dev/services/broker/internal/samplyxml"
	"fris.dev/services/broker/internal/storage"
)

var siteRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// CheckSite validates a site id.
func CheckSite(site string) error {
	if !siteRE.MatchString(site) {
		return rpcerr.New(rpcerr.ErrInvalid, "site id %q must be 1-64 letters, digits, '.', '_' or '-'", site)
	}
	return nil
}

// checkID accepts the numeric ids the broker hands out (real clients parse
// them as integers).
func checkID(kind, id string) error {
	if id == "" || len(id) > 12 || strings.Trim(id, "0123456789") != "" {
		return rpcerr.New(rpcerr.ErrInvalid, "%s id %.32q must be a number", kind, id)
	}
	return nil
}

// content is a validated InquiryContent.
type content struct {
	c     *brokerv1.InquiryContent
	query string
}

func (s *Service) validate(c *brokerv1.InquiryContent) (*content, error) {
	if c == nil {
		return nil, rpcerr.New(rpcerr.ErrInvalid, "inquiry content is required")
	}
	c = proto.Clone(c).(*brokerv1.InquiryContent)
	c.Label = strings.TrimSpace(c.Label)
	switch {
	case c.Label == "":
		return nil, rpcerr.New(rpcerr.ErrInvalid, "label is required")
	case len(c.Label) > 500:
		return nil, rpcerr.New(rpcerr.ErrInvalid, "label is longer than 500 bytes")
	case len(c.Description) > 20000:
		return nil, rpcerr.New(rpcerr.ErrInvalid, "description is longer than 20000 bytes")
	}
	if err := inputlimit.Check(inputlimit.F("query", c.Query, inputlimit.Text), inputlimit.F("contact.email", c.GetContact().GetEmail(), inputlimit.Email),
		inputlimit.F("expose_filename", c.ExposeFilename, inputlimit.Name)); err != nil {
		return nil, err
	}
	if len(c.TargetSites) > maxListed || len(c.SearchFor) > maxListed {
		return nil, rpcerr.New(rpcerr.ErrInvalid, "target_sites and search_for have at most %d entries each", maxListed)
	}
	q, err := samplyquery.Normalize([]byte(c.Query))
	if err != nil {
		return nil, rpcerr.New(rpcerr.ErrInvalid, "query: %v", err)
	}
	ct := c.GetContact()
	if ct == nil || strings.TrimSpace(ct.GetLastname()) == "" {
		return nil, rpcerr.New(rpcerr.ErrInvalid, "contact.lastname is required")
	}
	if ct.GetEmail() != "" {
		if a, err := mail.ParseAddress(ct.GetEmail()); err != nil || a.Address != ct.GetEmail() {
			return nil, rpcerr.New(rpcerr.ErrInvalid, "contact.email %q is not an email address", ct.GetEmail())
		}
	}
	for _, f := range []string{ct.GetTitle(), ct.GetFirstname(), ct.GetLastname(), ct.GetPhone(), ct.GetOrganization()} {
		if len(f) > 500 {
			return nil, rpcerr.New(rpcerr.ErrInvalid, "contact fields are limited to 500 bytes")
		}
	}
	if len(c.TargetSites) == 0 {
		return nil, rpcerr.New(rpcerr.ErrInvalid, "target_sites must name at least one site")
	}
	sites := make([]string, 0, len(c.TargetSites))
	for _, site := range c.TargetSites {
		site = strings.TrimSpace(site)
		if err := CheckSite(site); err != nil {
			return nil, err
		}
		if !slices.Contains(sites, site) {
			sites = append(sites, site)
		}
	}
	c.TargetSites = sites
	for _, sf := range c.SearchFor {
		if strings.TrimSpace(sf) == "" || len(sf) > 200 {
			return nil, rpcerr.New(rpcerr.ErrInvalid, "search_for entries must be 1-200 bytes")
		}
	}
	if exp := c.GetExpiresAt(); exp != nil {
		if err := exp.CheckValid(); err != nil {
			return nil, rpcerr.New(rpcerr.ErrInvalid, "expires_at: %v", err)
		}
		if !exp.AsTime().After(s.now()) {
			return nil, rpcerr.New(rpcerr.ErrInvalid, "expires_at is not in the future")
		}
	}
	if len(c.ExposePdf) > 0 {
		if len(c.ExposePdf) > s.cfg.MaxExposeBytes {
			return nil, rpcerr.New(rpcerr.ErrTooLarge, "expose_pdf is larger than %d bytes", s.cfg.MaxExposeBytes)
		}
		if err := CheckPDF(c.ExposePdf); err != nil {
			return nil, err
		}
		c.ExposeFilename = exposeName(c.ExposeFilename)
	}
	return &content{c: c, query: q}, nil
}

// CheckPDF accepts a document that starts as a PDF file does and carries
// the end-of-file marker PDF writers put at its end.
func CheckPDF(b []byte) error {
	if !bytes.HasPrefix(b, []byte("%PDF-")) {
		return rpcerr.New(rpcerr.ErrInvalid, "expose_pdf is not a PDF (it does not start with %%PDF-)")
	}
	tail := b[max(0, len(b)-1024):]
	if !bytes.Contains(tail, []byte("%%EOF")) {
		return rpcerr.New(rpcerr.ErrInvalid, "expose_pdf is not a complete PDF (no %%%%EOF marker at its end)")
	}
	return nil
}

// exposeName keeps a file name safe for Content-Disposition.
func exposeName(name string) string {
	name = path.Base(strings.ReplaceAll(strings.TrimSpace(name), `\`, "/"))
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '"' {
			return -1
		}
		return r
	}, name)
	if name == "" || name == "." || name == "/" {
		return "expose.pdf"
	}
	if len(name) > 200 {
		name = name[:200]
	}
	return name
}

func (ct *content) apply(in *brokerv1.Inquiry) {
	c := ct.c
	in.Label, in.Description, in.Query = c.Label, c.Description, ct.query
	in.Contact = c.Contact
	in.SearchFor, in.TargetSites, in.ExpiresAt = c.SearchFor, c.TargetSites, c.ExpiresAt
}

func (ct *content) expose() *storage.NewExpose {
	if len(ct.c.ExposePdf) == 0 {
		return nil
	}
	return &storage.NewExpose{Filename: ct.c.ExposeFilename, Data: ct.c.ExposePdf}
}

// CreateInquiry stores a new draft inquiry of author.
func (s *Service) CreateInquiry(ctx context.Context, author string, c *brokerv1.InquiryContent) (*brokerv1.Inquiry, error) {
	if strings.TrimSpace(author) == "" {
		return nil, rpcerr.New(rpcerr.ErrInvalid, "author is required")
	}
	ct, err := s.validate(c)
	if err != nil {
		return nil, err
	}
	if err := s.requireSites(ctx, ct.c.TargetSites...); err != nil {
		return nil, err
	}
	in := &brokerv1.Inquiry{Revision: 1, Status: brokerv1.InquiryStatus_DRAFT, Author: author, CreatedAt: timestamppb.New(s.now())}
	ct.apply(in)
	out, err := s.store.CreateInquiry(ctx, in, ct.expose())
	if err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "inquiry created", "inquiry", out.GetId(), "author", author)
	return out, nil
}

// owned reads an inquiry; author "" means any (operators).
func (s *Service) owned(ctx context.Context, id, author string) (*brokerv1.Inquiry, error) {
	if err := checkID("inquiry", id); err != nil {
		return nil, err
	}
	in, err := s.store.Inquiry(ctx, id)
	if errors.Is(err, storage.ErrNotFound) || (err == nil && author != "" && in.GetAuthor() != author) {
		return nil, errNoInquiry(id)
	}
	return in, err
}

// GetInquiry returns an inquiry (of author, unless author is "").
func (s *Service) GetInquiry(ctx context.Context, id, author string) (*brokerv1.Inquiry, error) {
	return s.owned(ctx, id, author)
}

// update changes an inquiry of author atomically.
func (s *Service) update(ctx context.Context, id, author string, fn func(*brokerv1.Inquiry) (*storage.NewExpose, error)) (*brokerv1.Inquiry, error) {
	if _, err := s.owned(ctx, id, author); err != nil {
		return nil, err
	}
	out, err := s.store.UpdateInquiry(ctx, id, fn)
	if err != nil {
		return nil, notFound(err, "no inquiry %s", id)
	}
	s.changed()
	return out, nil
}

var errClosed = rpcerr.New(rpcerr.ErrInvalid, "the inquiry is closed")

// UpdateInquiry replaces an inquiry's content; the revision increments
// when anything a bank reads changes.
func (s *Service) UpdateInquiry(ctx context.Context, id, author string, c *brokerv1.InquiryContent) (*brokerv1.Inquiry, error) {
	ct, err := s.validate(c)
	if err != nil {
		return nil, err
	}
	if err := s.requireSites(ctx, ct.c.TargetSites...); err != nil {
		return nil, err
	}
	return s.update(ctx, id, author, func(in *brokerv1.Inquiry) (*storage.NewExpose, error) {
		if in.GetStatus() == brokerv1.InquiryStatus_CLOSED {
			return nil, errClosed
		}
		before := proto.Clone(in)
		ct.apply(in)
		e := ct.expose()
		if e != nil || !proto.Equal(before, in) {
			in.Revision++
		}
		return e, nil
	})
}

// ReleaseInquiry makes a draft visible to the banks of its sites.
func (s *Service) ReleaseInquiry(ctx context.Context, id, author string) (*brokerv1.Inquiry, error) {
	return s.update(ctx, id, author, func(in *brokerv1.Inquiry) (*storage.NewExpose, error) {
		switch in.GetStatus() {
		case brokerv1.InquiryStatus_CLOSED:
			return nil, errClosed
		case brokerv1.InquiryStatus_RELEASED:
			return nil, nil
		}
		if exp := in.GetExpiresAt(); exp != nil && !exp.AsTime().After(s.now()) {
			return nil, rpcerr.New(rpcerr.ErrInvalid, "the inquiry expired; set a new expires_at first")
		}
		in.Status = brokerv1.InquiryStatus_RELEASED
		in.ReleasedAt = timestamppb.New(s.now())
		return nil, nil
	})
}

// CloseInquiry withdraws an inquiry from the banks; its replies stay.
func (s *Service) CloseInquiry(ctx context.Context, id, author string) (*brokerv1.Inquiry, error) {
	return s.update(ctx, id, author, func(in *brokerv1.Inquiry) (*storage.NewExpose, error) {
		in.Status = brokerv1.InquiryStatus_CLOSED
		return nil, nil
	})
}

// ListInquiries lists inquiries of author ("" = all) with the given status
// (unspecified = all), newest first.
func (s *Service) ListInquiries(ctx context.Context, author string, st brokerv1.InquiryStatus) ([]*brokerv1.Inquiry, error) {
	all, err := s.store.Inquiries(ctx)
	if err != nil {
		return nil, err
	}
	out := []*brokerv1.Inquiry{}
	for i := len(all) - 1; i >= 0; i-- {
		in := all[i]
		if (author == "" || in.GetAuthor() == author) && (st == brokerv1.InquiryStatus_INQUIRY_STATUS_UNSPECIFIED || in.GetStatus() == st) {
			out = append(out, in)
		}
	}
	return out, nil
}

// Document is a rendered response for a bank.
type Document struct {
	Body        []byte
	ContentType string
	Filename    string
}

const xmlType = "application/xml; charset=utf-8"

// List is the inquiry list of the calling bank.
func (s *Service) List(ctx context.Context) (Document, error) {
	b, err := s.caller(ctx)
	if err != nil {
		return Document{}, err
	}
	if b.Status != storage.BankActive || b.SiteID == "" {
		return Document{Body: emptyList, ContentType: xmlType}, nil
	}
	s.polled(ctx, b.SiteID)
	body, err := s.siteList(ctx, b.SiteID)
	return Document{Body: body, ContentType: xmlType}, err
}

// visible reads an inquiry the calling bank may see.
func (s *Service) visible(ctx context.Context, id string) (*brokerv1.Inquiry, storage.Bank, error) {
	b, err := s.caller(ctx)
	if err != nil {
		return nil, b, err
	}
	if err := checkID("inquiry", id); err != nil {
		return nil, b, err
	}
	in, err := s.store.Inquiry(ctx, id)
	if errors.Is(err, storage.ErrNotFound) || (err == nil && !visibleTo(in, b, s.now())) {
		return nil, b, errNoInquiry(id)
	}
	return in, b, err
}

// Part renders one part of an inquiry for the calling bank.
func (s *Service) Part(ctx context.Context, id string, part brokerv1.InquiryPart) (Document, error) {
	in, b, err := s.visible(ctx, id)
	if err != nil {
		return Document{}, err
	}
	s.seen(ctx, in.GetId(), b.SiteID)
	switch part {
	case brokerv1.InquiryPart_WHOLE:
		url := ""
		if e := in.GetExpose(); e != nil {
			url = strings.TrimRight(s.cfg.PublicURL, "/") + "/exposes/" + e.GetId()
		}
		return Document{Body: samplyxml.Inquiry(in, in.GetQuery(), url), ContentType: xmlType}, nil
	case brokerv1.InquiryPart_QUERY:
		return Document{Body: samplyxml.Query(in.GetQuery()), ContentType: xmlType}, nil
	case brokerv1.InquiryPart_CONTACT:
		return Document{Body: samplyxml.Contact(in.GetContact()), ContentType: xmlType}, nil
	case brokerv1.InquiryPart_INFO:
		return Document{Body: samplyxml.Info(in), ContentType: xmlType}, nil
	case brokerv1.InquiryPart_EXPOSE:
		if in.GetExpose() == nil {
			return Document{}, rpcerr.New(storage.ErrNotFound, "inquiry %s has no expose", id)
		}
		return s.exposeDoc(ctx, in.GetExpose().GetId())
	}
	return Document{}, rpcerr.New(rpcerr.ErrInvalid, "unknown inquiry part %v", part)
}

func (s *Service) exposeDoc(ctx context.Context, id string) (Document, error) {
	e, err := s.store.Expose(ctx, id)
	if err != nil {
		return Document{}, notFound(err, "no expose %s", id)
	}
	return Document{Body: e.Data, ContentType: "application/pdf", Filename: e.Filename}, nil
}

// Expose serves an expose by its own id to a bank that may see its inquiry.
func (s *Service) Expose(ctx context.Context, id string) (Document, error) {
	b, err := s.caller(ctx)
	if err != nil {
		return Document{}, err
	}
	if err := checkID("expose", id); err != nil {
		return Document{}, err
	}
	e, err := s.store.Expose(ctx, id)
	if err != nil {
		return Document{}, notFound(err, "no expose %s", id)
	}
	in, err := s.store.Inquiry(ctx, e.InquiryID)
	if err != nil || !visibleTo(in, b, s.now()) {
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return Document{}, err
		}
		return Document{}, rpcerr.New(storage.ErrNotFound, "no expose %s", id)
	}
	return Document{Body: e.Data, ContentType: "application/pdf", Filename: e.Filename}, nil
}

// maxListed bounds the lists of an inquiry: a network has tens of sites.
const maxListed = 1000
