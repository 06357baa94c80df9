package explorer

import (
	"sync"

	brokerv1 "fris.dev/proto/broker/v1"
)

// The inquiry list's current totals: the broker's summary of each
// released inquiry's replies, said as the inquiry's page says it (so any
// rule the page applies to counts applies here too).

const (
	// maxListTotals bounds the totals one list asks for (the newest
	// inquiries'); older ones link to their pages.
	maxListTotals = 50
	// totalLookups is how many run at once.
	totalLookups = 4
)

// listTotals fills rows' totals for the released and closed inquiries
// ins, in the same order. A total the broker cannot give is left out: the
// list stays usable, the inquiry's page says why.
func (a *App) listTotals(q *req, v *view, b brokerv1.ResearcherServiceClient, ins []*brokerv1.Inquiry, rows []inquiryRow) {
	var (
		wg   sync.WaitGroup
		sem  = make(chan struct{}, totalLookups)
		asks = 0
	)
	for i, in := range ins {
		if in.GetStatus() == brokerv1.InquiryStatus_DRAFT || asks >= maxListTotals {
			continue
		}
		asks++
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			res, err := b.ListReplies(q.ctx, &brokerv1.ListRepliesRequest{Id: in.GetId()})
			if err != nil {
				return
			}
			r := resultsOf(v, in, res)
			rows[i].Total, rows[i].Answered = r.TotalText, v.T("res.answered", r.Answered, r.Targets)
		}()
	}
	wg.Wait()
}
