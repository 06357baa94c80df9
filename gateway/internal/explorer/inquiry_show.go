package explorer

import (
	"net/http"

	"fris.dev/gateway/internal/explorer/querybuild"
	"fris.dev/pkg/samplyquery"

	brokerv1 "fris.dev/proto/broker/v1"
)

// inquiryPage is an inquiry with its results.
type inquiryPage struct {
	In        *brokerv1.Inquiry
	Href      string
	StatusKey string
	Expires   string
	Created   string
	Released  string
	Draft     bool
	Closed    bool
	Results   *results
	// Events is the results' event stream while replies may come.
	Events string
	// Problem is why the last action failed (the broker's words).
	Problem string
	// Words is the query in words.
	Words words
	// Empty: the query has no condition, so releasing it asks every
	// site for every donor; the page warns and asks once more.
	Empty bool
	// Reach is how far the inquiry has got to its sites (released only).
	Reach *reach
	// Confirm is why the last release or close was not done: its
	// confirmation was not given.
	Confirm string
}

func (a *App) showInquiry(q *req) error {
	return a.inquiryView(q, http.StatusOK, "", "")
}

func (a *App) inquiryView(q *req, code int, problem, confirm string) error {
	b, err := a.broker()
	if err != nil {
		return err
	}
	in, err := a.ownInquiry(q)
	if err != nil {
		return err
	}
	v := a.view(q, "inq.title")
	v.Title = in.GetLabel()
	v.Section = "inquiries"
	v.Crumbs = []crumb{{v.T("inq.title"), InquiriesPath}, {v.Title, ""}}
	p := &inquiryPage{In: in, Href: inquiryHref(in.GetId()), StatusKey: statusKey(in.GetStatus()), Expires: minute(in.GetExpiresAt()),
		Created: minute(in.GetCreatedAt()), Released: minute(in.GetReleasedAt()),
		Draft: in.GetStatus() == brokerv1.InquiryStatus_DRAFT, Closed: in.GetStatus() == brokerv1.InquiryStatus_CLOSED, Problem: problem}
	p.Words = a.wordsOf(q, v, in.GetQuery())[0]
	p.Empty = noCondition(in.GetQuery())
	if confirm != "" {
		p.Confirm = v.T(confirm)
	}
	if !p.Draft {
		res, err := b.ListReplies(q.ctx, &brokerv1.ListRepliesRequest{Id: in.GetId()})
		if err != nil {
			return err
		}
		p.Results = resultsOf(v, in, res)
		if p.Reach, err = a.reachOf(q, b, in.GetId()); err != nil {
			return err
		}
		if !p.Closed {
			p.Events = p.Href + "/events"
		}
	}
	v.Data = p
	a.render(q, code, "inquiry", v)
	return nil
}

// noCondition reports whether a stored query names no data element at
// all; a query that cannot be read is not said to be empty.
func noCondition(doc string) bool {
	p, err := samplyquery.Parse([]byte(doc))
	return err == nil && len(querybuild.KeysOf(p)) == 0
}
