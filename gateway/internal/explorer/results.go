package explorer

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"net/http"
	"sort"
	"strconv"
	"time"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/timestamppb"

	"fris.dev/gateway/internal/httpx"
	brokerv1 "fris.dev/proto/broker/v1"
)

// results are an inquiry's replies by site: every target site, answered
// or not, with its count and a bar for the chart. A reply FRIS cannot read
// has no count: it is shown as unreadable, never as 0.
type results struct {
	Total int32
	// TotalText is Total, or "unreadable" when every reply was, with the
	// number of unreadable replies.
	TotalText  string
	Unreadable int32
	// Samples is the sum of the sample counts of Reply documents; nil
	// when none carries one, and then the table has no sample column.
	Samples  *int32
	Answered int
	Targets  int
	Rows     []siteRow
	Pending  []string
	// Docs are the Reply documents with breakdowns; Unread the bodies
	// that are not counts, as sent.
	Docs   []replyDoc
	Unread []unreadReply
	// Summary is the sentence a screen reader hears on each update.
	Summary string
	Chart   chart
	V       *view
}

type siteRow struct {
	Site       string
	Answered   bool
	Target     bool
	Count      int32
	CountText  string
	Unreadable int32
	Samples    *int32
	Replies    int32
	Last       string
	// Y and W place the row's bar in the chart.
	Y, BarY, W, TextY, NumX int
}

// replyDoc is a Reply document's entities that have breakdowns.
type replyDoc struct {
	Site     string
	Entities []*brokerv1.ReplyEntity
}

type unreadReply struct {
	Site, Body string
}

// maxShownBody bounds an unreadable body on the page; the API has it whole.
const maxShownBody = 300

// chart is the geometry of the bar chart, server-drawn SVG: it needs no
// script, takes the page's colours in dark mode, and screen readers read
// the table it sits beside (the SVG is one labelled image).
type chart struct {
	Height, LabelW, LabelX, BarW, Width int
}

const (
	barRow   = 32
	barLabel = 150
	barMax   = 360
)

func resultsOf(v *view, in *brokerv1.Inquiry, res *brokerv1.ListRepliesResponse) *results {
	r := &results{Total: res.GetTotal(), V: v}
	rows := map[string]*siteRow{}
	for _, s := range in.GetTargetSites() {
		rows[s] = &siteRow{Site: s, Target: true}
	}
	for _, sc := range res.GetSites() {
		row := rows[sc.GetSiteId()]
		if row == nil {
			row = &siteRow{Site: sc.GetSiteId()}
			rows[sc.GetSiteId()] = row
		}
		row.Answered, row.Count, row.Replies = true, sc.GetCount(), sc.GetReplies()
		row.Unreadable, row.Samples = sc.GetUnreadable(), sc.Samples
		row.CountText = countText(v, row.Count, row.Replies, row.Unreadable)
	}
	r.Unreadable, r.Samples = res.GetUnreadable(), res.Samples
	r.TotalText = countText(v, r.Total, int32(len(res.GetReplies())), r.Unreadable)
	last := map[string]*timestamppb.Timestamp{}
	for _, rp := range res.GetReplies() {
		if t := last[rp.GetSiteId()]; t == nil || rp.GetReceivedAt().AsTime().After(t.AsTime()) {
			last[rp.GetSiteId()] = rp.GetReceivedAt()
		}
		if rp.GetUnreadable() {
			r.Unread = append(r.Unread, unreadReply{Site: rp.GetSiteId(), Body: abbreviate(rp.GetBody(), maxShownBody)})
			continue
		}
		doc := replyDoc{Site: rp.GetSiteId()}
		for _, e := range []*brokerv1.ReplyEntity{rp.GetDonor(), rp.GetSample()} {
			if len(e.GetStratifications()) > 0 {
				doc.Entities = append(doc.Entities, e)
			}
		}
		if len(doc.Entities) > 0 {
			r.Docs = append(r.Docs, doc)
		}
	}
	sort.SliceStable(r.Docs, func(i, j int) bool { return r.Docs[i].Site < r.Docs[j].Site })
	sort.SliceStable(r.Unread, func(i, j int) bool { return r.Unread[i].Site < r.Unread[j].Site })
	var max int32
	for _, row := range rows {
		row.Last = minute(last[row.Site])
		if row.Count > max {
			max = row.Count
		}
		r.Rows = append(r.Rows, *row)
	}
	sort.Slice(r.Rows, func(i, j int) bool { return r.Rows[i].Site < r.Rows[j].Site })
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Target {
			r.Targets++
		}
		if row.Answered {
			r.Answered++
		} else {
			r.Pending = append(r.Pending, row.Site)
		}
		row.Y = i * barRow
		row.TextY = row.Y + barRow/2 + 5
		row.BarY = row.Y + 6
		if max > 0 {
			row.W = int(int64(row.Count) * barMax / int64(max))
		}
		if row.Answered && row.Count > 0 && row.W < 2 {
			row.W = 2
		}
		row.NumX = barLabel + row.W + 8
	}
	r.Chart = chart{Height: len(r.Rows)*barRow + 4, LabelW: barLabel, LabelX: barLabel - 8, BarW: barMax, Width: barLabel + barMax + 90}
	r.Summary = v.T("res.summary", r.TotalText, r.Answered, r.Targets)
	return r
}

// countText is a summed count as the page shows it: "unreadable" when
// every reply summed was, else the count with how many were.
func countText(v *view, count, replies, unreadable int32) string {
	switch {
	case unreadable == 0:
		return strconv.Itoa(int(count))
	case unreadable >= replies:
		return v.T("res.unreadable")
	default:
		return v.T("res.count.partial", count, unreadable)
	}
}

// abbreviate cuts s to at most n runes, marking the cut.
func abbreviate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// streamLife bounds one event stream: the browser reconnects, and the
// session is checked as for any page (tokens refreshed).
const streamLife = 5 * time.Minute

// events streams an inquiry's results as Server-Sent Events: the results
// section, rendered, on every change the broker's WatchReplies reports.
// Every cfg.SessionCheck the stream checks that its session is still
// signed in as the same user with a token not revoked, and ends when not:
// signing out or a revoke stops the replies within that time (plus the
// gateway's revocation poll), not at the end of streamLife.
func (a *App) events(q *req) error {
	b, err := a.broker()
	if err != nil {
		return err
	}
	in, err := a.ownInquiry(q)
	if err != nil {
		return err
	}
	// The stream outlives the page's call timeout; it keeps the caller's
	// identity and language.
	md, _ := metadata.FromOutgoingContext(q.ctx)
	ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(q.r.Context(), md), streamLife)
	defer cancel()
	if a.cfg.Done != nil {
		go func() {
			select {
			case <-a.cfg.Done:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	stream, err := b.WatchReplies(ctx, &brokerv1.ListRepliesRequest{Id: in.GetId()})
	if err != nil {
		return err
	}
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	h := q.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("X-Accel-Buffering", "no")
	q.w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(q.w)
	v := a.view(q, "res.title")
	send := func(body []byte) error {
		_ = rc.SetWriteDeadline(time.Now().Add(time.Minute))
		if _, err := q.w.Write(body); err != nil {
			return err
		}
		return rc.Flush()
	}
	if err := send([]byte("retry: 3000\n\n")); err != nil {
		return nil
	}
	updates := make(chan *brokerv1.ListRepliesResponse)
	go func() {
		defer close(updates)
		for {
			res, err := stream.Recv()
			if err != nil {
				if !errors.Is(err, io.EOF) && ctx.Err() == nil {
					a.cfg.Log.InfoContext(ctx, "explorer: reply stream ended", "err", err, "request_id", httpx.RequestID(q.r.Context()))
				}
				return
			}
			select {
			case updates <- res:
			case <-ctx.Done():
				return
			}
		}
	}()
	keepAlive := time.NewTicker(25 * time.Second)
	defer keepAlive.Stop()
	check := time.NewTicker(a.cfg.SessionCheck)
	defer check.Stop()
	res := first
	for {
		if res != nil {
			var buf bytes.Buffer
			if err := a.pages.ExecuteTemplate(&buf, "inq-results", resultsOf(v, in, res)); err != nil {
				a.cfg.Log.Error("explorer: rendering", "page", "results", "err", err)
				return nil
			}
			if err := send(sseEvent("results", buf.Bytes())); err != nil {
				return nil
			}
		}
		select {
		case res = <-updates:
			if res == nil {
				return nil // the stream ended: the browser reconnects
			}
		case <-keepAlive.C:
			res = nil
			if err := send([]byte(": keep-alive\n\n")); err != nil {
				return nil
			}
		case <-check.C:
			res = nil
			if !a.stillSignedIn(ctx, q.sess.ID, q.id.Subject) {
				// EventSource reconnects and is refused (401): it stops.
				return nil
			}
		case <-ctx.Done():
			return nil
		}
	}
}

// stillSignedIn: the session id is still stored, signed in as subject,
// with an access token the verifier accepts (its revocation list
// included). Tokens are not refreshed here: an expired one ends the
// stream, and the browser's reconnection refreshes it as any page does.
func (a *App) stillSignedIn(ctx context.Context, id, subject string) bool {
	s, err := a.cfg.Store.Get(ctx, id)
	if err != nil || s.User == nil || s.Token == nil {
		return false
	}
	vid, err := a.cfg.Verifier.Verify(ctx, s.Token.AccessToken)
	return err == nil && !vid.Anonymous() && vid.Subject == subject
}

// sseEvent frames data as one event: a data line for each of its lines.
func sseEvent(name string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString("event: " + name + "\n")
	for _, line := range bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n")) {
		b.WriteString("data: ")
		b.Write(bytes.TrimRight(line, "\r"))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// repliesCSV is the results as a CSV file: a line per site, those that
// have not answered included.
func (a *App) repliesCSV(q *req) error {
	b, err := a.broker()
	if err != nil {
		return err
	}
	in, err := a.ownInquiry(q)
	if err != nil {
		return err
	}
	res, err := b.ListReplies(q.ctx, &brokerv1.ListRepliesRequest{Id: in.GetId()})
	if err != nil {
		return err
	}
	r := resultsOf(a.view(q, "res.title"), in, res)
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	// count is empty for a site that has not answered and "unreadable"
	// when none of its replies carried a count; unreadable says how many
	// did not, samples is empty when no Reply document gave one.
	_ = w.Write([]string{"site", "answered", "count", "replies", "last_reply_utc", "unreadable", "samples"})
	for _, row := range r.Rows {
		count, samples := "", ""
		switch {
		case !row.Answered:
		case row.Unreadable >= row.Replies:
			count = "unreadable"
		default:
			count = strconv.Itoa(int(row.Count))
		}
		if row.Samples != nil {
			samples = strconv.Itoa(int(*row.Samples))
		}
		_ = w.Write([]string{csvSafe(row.Site), strconv.FormatBool(row.Answered), count, strconv.Itoa(int(row.Replies)), row.Last,
			strconv.Itoa(int(row.Unreadable)), samples})
	}
	w.Flush()
	h := q.w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="inquiry-`+in.GetId()+`-replies.csv"`)
	q.w.WriteHeader(http.StatusOK)
	_, _ = q.w.Write(buf.Bytes())
	return nil
}

// csvSafe keeps a spreadsheet from reading a cell as a formula (site ids
// cannot start so, but the file should not depend on it).
func csvSafe(s string) string {
	if s != "" && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@') {
		return "'" + s
	}
	return s
}
