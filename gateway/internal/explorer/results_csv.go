package explorer

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"strconv"

	brokerv1 "fris.dev/proto/broker/v1"
)

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
	v := a.view(q, "res.title")
	r := resultsOf(v, in, res)
	var buf bytes.Buffer
	buf.WriteString(csvQueryLine(v, a.wordsOf(q, v, in.GetQuery())[0]))
	w := csv.NewWriter(&buf)
	// count is empty for a site that has not answered and "unreadable"
	// when none of its replies carried a count; unreadable says how many
	// did not, samples is empty when no Reply document gave one. Under the
	// broker's small-count rule a count below k is "< k" and count is the
	// sum of the counts shown ("12 + < 5" when a site sent both). The
	// last three columns are empty on these rows.
	_ = w.Write([]string{"site", "answered", "count", "replies", "last_reply_utc", "unreadable", "samples",
		"entity", "stratification", "stratum"})
	for _, row := range r.Rows {
		count, samples := "", ""
		switch {
		case !row.Answered:
		case row.Unreadable >= row.Replies:
			count = "unreadable"
		case row.Suppressed > 0 && r.MinCount > 0:
			count = "< " + strconv.Itoa(int(r.MinCount))
			if row.Replies-row.Unreadable > row.Suppressed {
				count = strconv.Itoa(int(row.Count)) + " + " + count
			}
		default:
			count = strconv.Itoa(int(row.Count))
		}
		if row.Samples != nil {
			samples = row.SamplesText
		}
		_ = w.Write([]string{csvSafe(row.Site), strconv.FormatBool(row.Answered), count, strconv.Itoa(int(row.Replies)), row.Last,
			strconv.Itoa(int(row.Unreadable)), samples, "", "", ""})
	}
	writeStrata(w, r.Strata)
	w.Flush()
	h := q.w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="inquiry-`+in.GetId()+`-replies.csv"`)
	q.w.WriteHeader(http.StatusOK)
	_, _ = q.w.Write(buf.Bytes())
	return nil
}

// writeStrata adds a row per site and stratum after the site rows, every
// row as wide as the header: site, count (as the page shows it, "< k"
// when hidden), entity, stratification and stratum; the columns of the
// site rows are empty, so a row with an entity is a stratum's.
func writeStrata(w *csv.Writer, tables []strataTable) {
	for _, t := range tables {
		for _, row := range t.Rows {
			for i, c := range row.Cells {
				if !c.Sent {
					continue
				}
				_ = w.Write([]string{csvSafe(t.Sites[i]), "", c.Text, "", "", "", "", t.Entity, csvSafe(t.Title), csvSafe(row.Label)})
			}
		}
	}
}

// csvSafe keeps a spreadsheet from reading a cell as a formula (site ids
// cannot start so, but the file should not depend on it).
func csvSafe(s string) string {
	if s != "" && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@') {
		return "'" + s
	}
	return s
}
