package service

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/identity"
	"fris.dev/pkg/rpcerr"
	brokerv1 "fris.dev/proto/broker/v1"
	"fris.dev/services/broker/internal/storage"
)

const unavailable = codes.Unavailable

func unixNano(n int64) time.Time { return time.Unix(0, n) }

func (s *Service) err(ctx context.Context, err error) error { return rpcerr.From(ctx, s.log, err) }

func doc(d Document) *brokerv1.Document {
	return &brokerv1.Document{Body: d.Body, ContentType: d.ContentType, Filename: d.Filename}
}

// Public is the banks' API.
type Public struct {
	brokerv1.UnimplementedBrokerServiceServer
	*Service
}

func (p Public) GetName(context.Context, *brokerv1.GetNameRequest) (*brokerv1.GetNameResponse, error) {
	return &brokerv1.GetNameResponse{Name: p.cfg.Name}, nil
}

func (p Public) RegisterBank(ctx context.Context, r *brokerv1.RegisterBankRequest) (*brokerv1.RegisterBankResponse, error) {
	tok, act, err := p.Register(ctx, r.GetEmail())
	if err != nil {
		err = p.err(ctx, err)
	}
	step := "registered"
	if act {
		step = "activation_code_sent"
	}
	p.cfg.Audit.Record(ctx, audit.Event{Action: "broker.bank.register", Target: auditEmail(r.GetEmail()), Err: err,
		Attrs: []slog.Attr{slog.String("step", step), slog.String("mode", p.cfg.Registration)}})
	if err != nil {
		return nil, err
	}
	return &brokerv1.RegisterBankResponse{Token: tok, ActivationRequired: act}, nil
}

func (p Public) DeleteBank(ctx context.Context, r *brokerv1.DeleteBankRequest) (*brokerv1.DeleteBankResponse, error) {
	err := p.Delete(ctx, r.GetEmail())
	ev := audit.Event{Action: "broker.bank.delete", Target: auditEmail(r.GetEmail())}
	if err != nil {
		ev.Err = p.err(ctx, err)
	} else {
		// Only the bank's own token deletes it: the bank proved who it
		// is, signed in.
		ev.Actor, ev.Class = "bank:"+strings.ToLower(strings.TrimSpace(r.GetEmail())), audit.ClassSignedIn
	}
	p.cfg.Audit.Record(ctx, ev)
	if ev.Err != nil {
		return nil, ev.Err
	}
	return &brokerv1.DeleteBankResponse{}, nil
}

func (p Public) GetBankStatus(ctx context.Context, r *brokerv1.GetBankStatusRequest) (*brokerv1.GetBankStatusResponse, error) {
	active, err := p.Status(ctx, r.GetEmail())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	st := brokerv1.BankStatus_PENDING
	if active {
		st = brokerv1.BankStatus_ACTIVE
	}
	return &brokerv1.GetBankStatusResponse{Status: st}, nil
}

func (p Public) ListInquiries(ctx context.Context, _ *brokerv1.ListInquiriesRequest) (*brokerv1.Document, error) {
	d, err := p.List(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return doc(d), nil
}

func (p Public) GetInquiryPart(ctx context.Context, r *brokerv1.GetInquiryPartRequest) (*brokerv1.Document, error) {
	d, err := p.Part(ctx, r.GetInquiryId(), r.GetPart())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return doc(d), nil
}

func (p Public) GetExpose(ctx context.Context, r *brokerv1.GetExposeRequest) (*brokerv1.Document, error) {
	d, err := p.Expose(ctx, r.GetExposeId())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return doc(d), nil
}

func (p Public) PutReply(ctx context.Context, r *brokerv1.PutReplyRequest) (*brokerv1.PutReplyResponse, error) {
	if err := p.Reply(ctx, r.GetInquiryId(), r.GetBankEmail(), r.GetBody(), r.GetContentType()); err != nil {
		return nil, p.err(ctx, err)
	}
	return &brokerv1.PutReplyResponse{Message: "reply stored"}, nil
}

func (p Public) HasExpose(ctx context.Context, r *brokerv1.HasExposeRequest) (*brokerv1.HasExposeResponse, error) {
	ok, err := p.Service.HasExpose(ctx, r.GetInquiryId())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &brokerv1.HasExposeResponse{HasExpose: ok}, nil
}

func (p Public) GetTestInquiry(ctx context.Context, _ *brokerv1.GetTestInquiryRequest) (*brokerv1.Document, error) {
	d, err := p.TestInquiry(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return doc(d), nil
}

func (p Public) GetReferenceQuery(ctx context.Context, r *brokerv1.GetReferenceQueryRequest) (*brokerv1.Document, error) {
	d, err := p.ReferenceQuery(ctx, r.GetLanguage())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return doc(d), nil
}

func (p Public) PutMonitoring(ctx context.Context, r *brokerv1.PutMonitoringRequest) (*brokerv1.PutMonitoringResponse, error) {
	if err := p.Monitoring(ctx, r.GetBody()); err != nil {
		return nil, p.err(ctx, err)
	}
	return &brokerv1.PutMonitoringResponse{Message: "report stored"}, nil
}

func (p Public) ListSiteNames(ctx context.Context, _ *brokerv1.ListSiteNamesRequest) (*brokerv1.Document, error) {
	d, err := p.SiteNames(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return doc(d), nil
}

func (p Public) SetBankSiteName(ctx context.Context, r *brokerv1.SetBankSiteNameRequest) (*brokerv1.SetBankSiteNameResponse, error) {
	if err := p.SetSiteName(ctx, r.GetEmail(), r.GetSiteName()); err != nil {
		return nil, p.err(ctx, err)
	}
	return &brokerv1.SetBankSiteNameResponse{Message: "site name recorded"}, nil
}

// Researcher is the researchers' API: the caller is the subject the
// gateway verified, and sees only its own inquiries.
type Researcher struct {
	brokerv1.UnimplementedResearcherServiceServer
	*Service
}

// subject is the caller's, who must hold the researcher scope. The gateway
// checks the scope first; checking it here too keeps the API closed to
// anyone who reaches the broker's gRPC port another way.
func (r Researcher) subject(ctx context.Context) (string, error) {
	id := identity.FromIncoming(ctx)
	if id.Anonymous() {
		return "", rpcerr.New(rpcerr.ErrUnauthenticated, "a bearer access token is required")
	}
	if !id.HasScope(identity.ScopeResearcher) {
		return "", rpcerr.New(rpcerr.ErrPermission, "the access token lacks the scope %s", identity.ScopeResearcher)
	}
	return id.Subject, nil
}

func (r Researcher) CreateInquiry(ctx context.Context, req *brokerv1.CreateInquiryRequest) (*brokerv1.Inquiry, error) {
	sub, err := r.subject(ctx)
	if err != nil {
		return nil, r.err(ctx, err)
	}
	in, err := r.Service.CreateInquiry(ctx, sub, req.GetContent())
	err = r.err(ctx, err)
	r.cfg.Audit.Record(ctx, audit.Event{Action: "broker.inquiry.create", Target: in.GetId(), Err: err,
		Attrs: []slog.Attr{slog.String("target_sites", strings.Join(req.GetContent().GetTargetSites(), ","))}})
	return in, err
}

func (r Researcher) ListInquiries(ctx context.Context, req *brokerv1.ListInquiriesOfAuthorRequest) (*brokerv1.InquiryList, error) {
	sub, err := r.subject(ctx)
	if err != nil {
		return nil, r.err(ctx, err)
	}
	ins, err := r.Service.ListInquiries(ctx, sub, req.GetStatus())
	if err != nil {
		return nil, r.err(ctx, err)
	}
	return &brokerv1.InquiryList{Inquiries: ins}, nil
}

func (r Researcher) GetInquiry(ctx context.Context, req *brokerv1.GetInquiryRequest) (*brokerv1.Inquiry, error) {
	return researcherCall(ctx, r, "", req.GetId(), r.Service.GetInquiry)
}

func (r Researcher) UpdateInquiry(ctx context.Context, req *brokerv1.UpdateInquiryRequest) (*brokerv1.Inquiry, error) {
	return researcherCall(ctx, r, "broker.inquiry.update", req.GetId(), func(ctx context.Context, id, author string) (*brokerv1.Inquiry, error) {
		return r.Service.UpdateInquiry(ctx, id, author, req.GetContent())
	})
}

func (r Researcher) ReleaseInquiry(ctx context.Context, req *brokerv1.ReleaseInquiryRequest) (*brokerv1.Inquiry, error) {
	return researcherCall(ctx, r, "broker.inquiry.release", req.GetId(), r.Service.ReleaseInquiry)
}

func (r Researcher) CloseInquiry(ctx context.Context, req *brokerv1.CloseInquiryRequest) (*brokerv1.Inquiry, error) {
	return researcherCall(ctx, r, "broker.inquiry.close", req.GetId(), r.Service.CloseInquiry)
}

func (r Researcher) ListReplies(ctx context.Context, req *brokerv1.ListRepliesRequest) (*brokerv1.ListRepliesResponse, error) {
	sub, err := r.subject(ctx)
	if err != nil {
		return nil, r.err(ctx, err)
	}
	res, err := r.ResearcherReplies(ctx, req.GetId(), sub)
	return res, r.err(ctx, err)
}

// WatchReplies streams the caller's inquiry's replies, then every change.
func (r Researcher) WatchReplies(req *brokerv1.ListRepliesRequest, stream grpc.ServerStreamingServer[brokerv1.ListRepliesResponse]) error {
	ctx := stream.Context()
	sub, err := r.subject(ctx)
	if err != nil {
		return r.err(ctx, err)
	}
	if err := r.Service.WatchReplies(ctx, req.GetId(), sub, stream.Send); err != nil {
		return r.err(ctx, err)
	}
	return nil
}

// GetInquiryExpose is the caller's inquiry's expose.
func (r Researcher) GetInquiryExpose(ctx context.Context, req *brokerv1.GetInquiryRequest) (*brokerv1.Document, error) {
	sub, err := r.subject(ctx)
	if err != nil {
		return nil, r.err(ctx, err)
	}
	d, err := r.InquiryExpose(ctx, req.GetId(), sub)
	if err != nil {
		return nil, r.err(ctx, err)
	}
	return doc(d), nil
}

// GetInquiryReach is how far the caller's inquiry has got to its sites.
func (r Researcher) GetInquiryReach(ctx context.Context, req *brokerv1.GetInquiryRequest) (*brokerv1.InquiryReach, error) {
	sub, err := r.subject(ctx)
	if err != nil {
		return nil, r.err(ctx, err)
	}
	res, err := r.Reach(ctx, req.GetId(), sub)
	return res, r.err(ctx, err)
}

// researcherCall runs fn for the caller; a change (action not empty) is
// audited.
func researcherCall(ctx context.Context, r Researcher, action, id string, fn func(ctx context.Context, id, author string) (*brokerv1.Inquiry, error)) (*brokerv1.Inquiry, error) {
	sub, err := r.subject(ctx)
	if err != nil {
		return nil, r.err(ctx, err)
	}
	in, err := fn(ctx, id, sub)
	if err != nil {
		err = r.err(ctx, err)
	}
	if action != "" {
		r.cfg.Audit.Record(ctx, audit.Event{Action: action, Target: id, Err: err})
	}
	if err != nil {
		return nil, err
	}
	return in, nil
}

// auditEmail is an address as a client sent it, bounded for the log.
func auditEmail(e string) string {
	e = strings.TrimSpace(e)
	if len(e) > 254 {
		e = e[:254]
	}
	return e
}

// Admin is the operators' API: every bank and every inquiry.
type Admin struct {
	brokerv1.UnimplementedBrokerAdminServer
	*Service
}

func bankMsg(b storage.Bank) *brokerv1.Bank {
	st := brokerv1.BankStatus_PENDING
	if b.Status == storage.BankActive && b.SiteID != "" {
		st = brokerv1.BankStatus_ACTIVE
	}
	out := &brokerv1.Bank{Email: b.Email, Status: st, SiteId: b.SiteID, RegisteredAt: timestamppb.New(time.Unix(b.RegisteredAt, 0)), ReportedSite: b.ReportedSite}
	if b.ApprovedAt != 0 {
		out.ApprovedAt = timestamppb.New(time.Unix(b.ApprovedAt, 0))
	}
	return out
}

func (a Admin) ListBanks(ctx context.Context, _ *brokerv1.ListBanksRequest) (*brokerv1.ListBanksResponse, error) {
	bs, err := a.store.Banks(ctx)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	res := &brokerv1.ListBanksResponse{Banks: make([]*brokerv1.Bank, 0, len(bs))}
	for _, b := range bs {
		res.Banks = append(res.Banks, bankMsg(b))
	}
	return res, nil
}

// setBank approves (activate) or relinks a bank to a site.
func (a Admin) setBank(ctx context.Context, email, site string, activate bool) (*brokerv1.Bank, error) {
	e, err := normalEmail(email)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	site = trimmed(site)
	if err := CheckSite(site); err != nil {
		return nil, a.err(ctx, err)
	}
	if err := a.requireSites(ctx, site); err != nil {
		return nil, a.err(ctx, err)
	}
	b, err := a.store.UpdateBank(ctx, e, func(b *storage.Bank) error {
		b.SiteID = site
		if activate && b.Status != storage.BankActive {
			b.Status = storage.BankActive
			b.ApprovedAt = a.now().Unix()
		}
		return nil
	})
	if err != nil {
		return nil, a.err(ctx, notFound(err, "no bank %s", e))
	}
	a.tokens.drop(b.TokenHash)
	a.changed()
	a.log.InfoContext(ctx, "bank linked to a site", "bank", e, "site", site, "status", b.Status)
	return bankMsg(b), nil
}

func (a Admin) ApproveBank(ctx context.Context, r *brokerv1.ApproveBankRequest) (*brokerv1.Bank, error) {
	return a.setBank(ctx, r.GetEmail(), r.GetSiteId(), true)
}

func (a Admin) LinkBankSite(ctx context.Context, r *brokerv1.LinkBankSiteRequest) (*brokerv1.Bank, error) {
	return a.setBank(ctx, r.GetEmail(), r.GetSiteId(), false)
}

func (a Admin) DeleteBank(ctx context.Context, r *brokerv1.AdminDeleteBankRequest) (*brokerv1.AdminDeleteBankResponse, error) {
	e, err := normalEmail(r.GetEmail())
	if err != nil {
		return nil, a.err(ctx, err)
	}
	b, err := a.store.Bank(ctx, e)
	if err != nil {
		return nil, a.err(ctx, notFound(err, "no bank %s", e))
	}
	if err := a.deleteBank(ctx, b); err != nil {
		return nil, a.err(ctx, err)
	}
	return &brokerv1.AdminDeleteBankResponse{}, nil
}

func (a Admin) CreateInquiry(ctx context.Context, r *brokerv1.CreateInquiryRequest) (*brokerv1.Inquiry, error) {
	in, err := a.Service.CreateInquiry(ctx, r.GetAuthor(), r.GetContent())
	return in, a.err(ctx, err)
}

func (a Admin) ListInquiries(ctx context.Context, r *brokerv1.AdminListInquiriesRequest) (*brokerv1.InquiryList, error) {
	ins, err := a.Service.ListInquiries(ctx, r.GetAuthor(), r.GetStatus())
	if err != nil {
		return nil, a.err(ctx, err)
	}
	return &brokerv1.InquiryList{Inquiries: ins}, nil
}

func (a Admin) GetInquiry(ctx context.Context, r *brokerv1.GetInquiryRequest) (*brokerv1.Inquiry, error) {
	in, err := a.Service.GetInquiry(ctx, r.GetId(), "")
	return in, a.err(ctx, err)
}

func (a Admin) UpdateInquiry(ctx context.Context, r *brokerv1.UpdateInquiryRequest) (*brokerv1.Inquiry, error) {
	in, err := a.Service.UpdateInquiry(ctx, r.GetId(), "", r.GetContent())
	return in, a.err(ctx, err)
}

func (a Admin) ReleaseInquiry(ctx context.Context, r *brokerv1.ReleaseInquiryRequest) (*brokerv1.Inquiry, error) {
	in, err := a.Service.ReleaseInquiry(ctx, r.GetId(), "")
	return in, a.err(ctx, err)
}

func (a Admin) CloseInquiry(ctx context.Context, r *brokerv1.CloseInquiryRequest) (*brokerv1.Inquiry, error) {
	in, err := a.Service.CloseInquiry(ctx, r.GetId(), "")
	return in, a.err(ctx, err)
}

func (a Admin) ListReplies(ctx context.Context, r *brokerv1.ListRepliesRequest) (*brokerv1.ListRepliesResponse, error) {
	res, err := a.OperatorReplies(ctx, r.GetId())
	return res, a.err(ctx, err)
}

func (a Admin) ListMonitoring(ctx context.Context, r *brokerv1.ListMonitoringRequest) (*brokerv1.ListMonitoringResponse, error) {
	rs, err := a.Reports(ctx, r.GetBankEmail())
	if err != nil {
		return nil, a.err(ctx, err)
	}
	return &brokerv1.ListMonitoringResponse{Reports: rs}, nil
}

func (p Public) CheckBankToken(ctx context.Context, r *brokerv1.CheckBankTokenRequest) (*brokerv1.CheckBankTokenResponse, error) {
	if err := p.CheckToken(ctx, r.GetBankEmail()); err != nil {
		return nil, p.err(ctx, err)
	}
	return &brokerv1.CheckBankTokenResponse{}, nil
}
