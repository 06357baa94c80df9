package service

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/timestamppb"

	"fris.dev/pkg/rpcerr"
	brokerv1 "fris.dev/proto/broker/v1"
	"fris.dev/services/broker/internal/monitoring"
	"fris.dev/services/broker/internal/samplyxml"
	"fris.dev/services/broker/internal/storage"
)

// The calls below serve what the deployed connector (share-client's
// BrokerConnector) asks besides the spec's paths.

// HasExpose tells whether a released, unexpired inquiry has an expose. The
// connector asks without a token, so the answer is the same for every
// caller, and an unknown, draft or closed inquiry is "no" like one without
// an expose: nothing else about it shows.
func (s *Service) HasExpose(ctx context.Context, id string) (bool, error) {
	if err := checkID("inquiry", id); err != nil {
		return false, err
	}
	in, err := s.store.Inquiry(ctx, id)
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return listed(in, s.now()) && in.GetExpose() != nil, nil
}

const (
	textType = "text/plain; charset=utf-8"
	jsonType = "application/json; charset=utf-8"
)

// testInquiry is the fixed inquiry of the connector's connection check.
var testInquiry = &brokerv1.Inquiry{
	Id: "0", Revision: 1, Label: "Test inquiry",
	Description: "A fixed example inquiry for checking the connection to the broker; do not answer it.",
	Contact:     &brokerv1.Contact{Title: "-", Firstname: "n/a", Lastname: "n/a", Phone: "-", Email: "no-reply@fris.invalid", Organization: "FRIS"},
	SearchFor:   []string{"Patienten"},
}

// TestInquiry is the example inquiry any registered bank (pending too) may
// read to check its connection and credentials. It carries the reference
// query; FRIS inquiries hold the Samply query language only, so a CQL
// connector gets the same document.
func (s *Service) TestInquiry(ctx context.Context) (Document, error) {
	if _, err := s.caller(ctx); err != nil {
		return Document{}, err
	}
	return Document{Body: samplyxml.Inquiry(testInquiry, monitoring.ReferenceQuery, ""), ContentType: xmlType}, nil
}

// ReferenceQuery is the query connectors run to measure themselves for
// monitoring, in the language their query-language header names.
func (s *Service) ReferenceQuery(ctx context.Context, lang brokerv1.QueryLanguage) (Document, error) {
	if _, err := s.caller(ctx); err != nil {
		return Document{}, err
	}
	if lang == brokerv1.QueryLanguage_QUERY_LANGUAGE_CQL {
		return Document{Body: []byte(monitoring.ReferenceCQL), ContentType: textType}, nil
	}
	return Document{Body: samplyxml.Query(monitoring.ReferenceQuery), ContentType: xmlType}, nil
}

// errNotApproved refuses what only an approved bank may do: a bank anyone
// can register (with an address they read) must not put a site name in
// front of the operator who decides which site it serves, nor fill the
// store with reports, before that operator approved it. The connector
// shows the status to its administrator and tries again later (it treats
// any answer but 200 as "not recorded", never as fatal).
func errNotApproved(b storage.Bank) error {
	return rpcerr.New(rpcerr.ErrPermission, "bank %s is not approved yet: an operator links it to its site first", b.Email)
}

// approved reports a bank an operator linked to a site.
func approved(b storage.Bank) bool { return b.Status == storage.BankActive && b.SiteID != "" }

// Monitoring stores the calling bank's status report; the latest wins.
// Only an approved bank's (errNotApproved).
func (s *Service) Monitoring(ctx context.Context, body []byte) error {
	b, err := s.caller(ctx)
	if err != nil {
		return err
	}
	if !approved(b) {
		return errNotApproved(b)
	}
	if len(body) > monitoring.MaxBytes {
		return rpcerr.New(rpcerr.ErrTooLarge, "report larger than %d bytes", monitoring.MaxBytes)
	}
	items, err := monitoring.Parse(body)
	if err != nil {
		return rpcerr.New(rpcerr.ErrInvalid, "%v", err)
	}
	r := storage.Report{BankEmail: b.Email, SiteID: b.SiteID, ReceivedAt: s.now().UnixNano(), Items: items}
	if err := s.store.PutReport(ctx, r); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			// Deleted since its token was cached.
			return rpcerr.New(rpcerr.ErrUnauthenticated, "unknown bank token")
		}
		return err
	}
	s.log.InfoContext(ctx, "monitoring report stored", "bank", b.Email, "site", b.SiteID, "items", len(items))
	return nil
}

// SiteNames lists the sites banks are linked to, as the connector parses
// them: [{"name": "charite"}, ...].
func (s *Service) SiteNames(ctx context.Context) (Document, error) {
	if _, err := s.caller(ctx); err != nil {
		return Document{}, err
	}
	banks, err := s.store.Banks(ctx)
	if err != nil {
		return Document{}, err
	}
	seen := map[string]bool{}
	for _, b := range banks {
		if b.Status == storage.BankActive && b.SiteID != "" {
			seen[b.SiteID] = true
		}
	}
	type site struct {
		Name string `json:"name"`
	}
	out := make([]site, 0, len(seen))
	for n := range seen {
		out = append(out, site{Name: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	body, err := json.Marshal(out)
	return Document{Body: body, ContentType: jsonType}, err
}

// maxSiteName bounds a reported site name; real ones are a city or an
// institution.
const maxSiteName = 200

// SetSiteName records the site name a bank's connector reports. It is only
// a hint for operators (a bank choosing its own site would choose whose
// inquiries it reads), and only an approved bank's (errNotApproved).
func (s *Service) SetSiteName(ctx context.Context, email, name string) error {
	b, err := s.bankForEmail(ctx, email)
	if errors.Is(err, errMismatch) {
		return rpcerr.New(rpcerr.ErrUnauthenticated, "the token does not belong to %s", b.Email)
	}
	if err != nil {
		return err
	}
	if !approved(b) {
		return errNotApproved(b)
	}
	name = strings.TrimSpace(name)
	if name == "" || len(name) > maxSiteName || !printable(name) {
		return rpcerr.New(rpcerr.ErrInvalid, "the site name must be 1-%d bytes of printable UTF-8", maxSiteName)
	}
	if _, err := s.store.UpdateBank(ctx, b.Email, func(b *storage.Bank) error { b.ReportedSite = name; return nil }); err != nil {
		return notFound(err, "no bank %s", b.Email)
	}
	s.log.InfoContext(ctx, "bank reported its site name", "bank", b.Email, "site_name", name, "linked_site", b.SiteID)
	return nil
}

// printable reports valid UTF-8 without control characters.
func printable(v string) bool {
	if !utf8.ValidString(v) {
		return false
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// Reports lists the latest monitoring reports (of one bank when email is set).
func (s *Service) Reports(ctx context.Context, email string) ([]*brokerv1.MonitoringReport, error) {
	if email != "" {
		e, err := normalEmail(email)
		if err != nil {
			return nil, err
		}
		email = e
	}
	rs, err := s.store.Reports(ctx)
	if err != nil {
		return nil, err
	}
	out := []*brokerv1.MonitoringReport{}
	for _, r := range rs {
		if email != "" && r.BankEmail != email {
			continue
		}
		m := &brokerv1.MonitoringReport{BankEmail: r.BankEmail, SiteId: r.SiteID, ReceivedAt: timestamppb.New(unixNano(r.ReceivedAt))}
		for _, it := range r.Items {
			m.Items = append(m.Items, &brokerv1.MonitoringItem{ParameterName: it.ParameterName, StatusText: it.StatusText, ExitStatus: it.ExitStatus})
		}
		out = append(out, m)
	}
	return out, nil
}
