package explorer

import (
	"net/http"
	"strings"

	brokerv1 "fris.dev/proto/broker/v1"
)

// The list of a researcher's inquiries.

// inquiryRow is a line of the list of inquiries.
type inquiryRow struct {
	Href, Label, Status, StatusKey, Sites, Created, Released string
	Words                                                    words
	// Total is the released inquiry's current total as its page shows
	// it, Answered how many of its sites have answered; Total "" for a
	// draft, or beyond the totals one page asks for.
	Total    string
	Answered string
}

func (a *App) inquiries(q *req) error {
	b, err := a.broker()
	if err != nil {
		return err
	}
	res, err := b.ListInquiries(q.ctx, &brokerv1.ListInquiriesOfAuthorRequest{})
	if err != nil {
		return err
	}
	v := a.view(q, "inq.title")
	var docs []string
	for _, in := range res.GetInquiries() {
		docs = append(docs, in.GetQuery())
	}
	said := a.wordsOf(q, v, docs...)
	var rows []inquiryRow
	for i, in := range res.GetInquiries() {
		rows = append(rows, inquiryRow{Href: inquiryHref(in.GetId()), Label: in.GetLabel(), StatusKey: statusKey(in.GetStatus()),
			Status: strings.ToLower(in.GetStatus().String()), Sites: strings.Join(in.GetTargetSites(), ", "),
			Created: day(in.GetCreatedAt()), Released: day(in.GetReleasedAt()), Words: said[i]})
	}
	a.listTotals(q, v, b, res.GetInquiries(), rows)
	v.Section = "inquiries"
	v.Data = rows
	a.render(q, http.StatusOK, "inquiries", v)
	return nil
}
