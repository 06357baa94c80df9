package explorer

import (
	"crypto/subtle"
	"net/http"
	"net/url"

	"google.golang.org/protobuf/types/known/timestamppb"

	brokerv1 "fris.dev/proto/broker/v1"
)

// The researcher's pages: the query builder, inquiries and their results
// (docs/interface.md, "Explorer"). They call the broker's ResearcherService
// with the signed-in user's identity, so the broker's own checks apply: a
// researcher sees only their own inquiries, and only with the
// broker:researcher scope.
const (
	InquiriesPath = Prefix + "/inquiries"
	QueryPath     = Prefix + "/query"
)

// inquiryRoutes are the researcher's pages, for signed-in users, and the
// query builder's fragments, public: they only look up the registry, as
// its own pages do.
func (a *App) inquiryRoutes() []route {
	return []route{
		{pattern: "GET " + InquiriesPath, access: researcher, page: a.inquiries},
		{pattern: "GET " + InquiriesPath + "/new", access: researcher, page: a.newInquiry},
		{pattern: "POST " + InquiriesPath, access: researcher, page: a.createInquiry},
		{pattern: "GET " + InquiriesPath + "/{id}", access: researcher, page: a.showInquiry},
		{pattern: "POST " + InquiriesPath + "/{id}", access: researcher, page: a.updateInquiry},
		{pattern: "GET " + InquiriesPath + "/{id}/edit", access: researcher, page: a.editInquiry},
		{pattern: "POST " + InquiriesPath + "/{id}/release", access: researcher, page: a.releaseInquiry},
		{pattern: "POST " + InquiriesPath + "/{id}/close", access: researcher, page: a.closeInquiry},
		{pattern: "GET " + InquiriesPath + "/{id}/events", access: researcher, page: a.events},
		{pattern: "GET " + InquiriesPath + "/{id}/replies.csv", access: researcher, page: a.repliesCSV},
		{pattern: "GET " + QueryPath + "/elements", access: public, page: a.qbElements},
		{pattern: "GET " + QueryPath + "/condition", access: public, page: a.qbCondition},
		{pattern: "GET " + QueryPath + "/group", access: public, page: a.qbGroup},
		{pattern: "GET " + QueryPath + "/preview", access: public, page: a.qbPreview},
		{pattern: "GET " + QueryPath + "/catalogue", access: public, page: a.qbCatalogue},
		{pattern: "GET " + QueryPath + "/catalogue/add", access: public, page: a.qbCatAdd},
		{pattern: "GET " + QueryPath + "/catalogue/element", access: public, page: a.qbCatElement},
	}
}

func inquiryHref(id string) string { return InquiriesPath + "/" + url.PathEscape(id) }

// broker is the researcher client, or a 503 page when the gateway has no
// broker.
func (a *App) broker() (brokerv1.ResearcherServiceClient, error) {
	if a.cfg.Broker == nil {
		return nil, fail(http.StatusServiceUnavailable, "error.unavailable")
	}
	return a.cfg.Broker, nil
}

// checkPost admits a state-changing request: from this site, with the
// session's CSRF token.
func (a *App) checkPost(q *req, form url.Values) error {
	if !sameOrigin(q.r) {
		return fail(http.StatusForbidden, "error.crosssite")
	}
	if subtle.ConstantTimeCompare([]byte(form.Get(CSRFField)), []byte(q.sess.CSRF)) != 1 {
		return fail(http.StatusForbidden, "error.csrf")
	}
	return nil
}

func statusKey(s brokerv1.InquiryStatus) string {
	switch s {
	case brokerv1.InquiryStatus_DRAFT:
		return "inq.status.draft"
	case brokerv1.InquiryStatus_RELEASED:
		return "inq.status.released"
	case brokerv1.InquiryStatus_CLOSED:
		return "inq.status.closed"
	}
	return "inq.status.unknown"
}

func day(ts *timestamppb.Timestamp) string {
	if ts == nil {
		return ""
	}
	return ts.AsTime().UTC().Format("2006-01-02")
}

func minute(ts *timestamppb.Timestamp) string {
	if ts == nil {
		return ""
	}
	return ts.AsTime().UTC().Format("2006-01-02 15:04 UTC")
}

// ownInquiry reads an inquiry of the signed-in user.
func (a *App) ownInquiry(q *req) (*brokerv1.Inquiry, error) {
	b, err := a.broker()
	if err != nil {
		return nil, err
	}
	return b.GetInquiry(q.ctx, &brokerv1.GetInquiryRequest{Id: q.r.PathValue("id")})
}
