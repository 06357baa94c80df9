package explorer

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	brokerv1 "fris.dev/proto/broker/v1"
)

// The inquiry's expose as a download for its author, and how far the
// inquiry has got to its sites (each site's last poll, whether it fetched
// the inquiry), so a researcher knows whether to wait.

// exposeRoutes are the expose's download, for its author (the broker
// answers the author only).
func (a *App) exposeRoutes() []route {
	return []route{
		{pattern: "GET " + InquiriesPath + "/{id}/expose", access: researcher, page: a.expose},
	}
}

// maxExposeDownload bounds an expose the Explorer passes on: the broker
// holds exposes of up to 10 MiB by default; one far larger is not one the
// Explorer's form sent.
const maxExposeDownload = 64 << 20

func (a *App) expose(q *req) error {
	b, err := a.broker()
	if err != nil {
		return err
	}
	d, err := b.GetInquiryExpose(q.ctx, &brokerv1.GetInquiryRequest{Id: q.r.PathValue("id")})
	if err != nil {
		return err
	}
	body := d.GetBody()
	if len(body) > maxExposeDownload {
		return fail(http.StatusBadGateway, "error.service")
	}
	h := q.w.Header()
	h.Set("Content-Type", "application/pdf")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": exposeFilename(d.GetFilename(), q.r.PathValue("id"))}))
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("X-Content-Type-Options", "nosniff")
	// Should a browser show it rather than save it, it runs nothing on
	// this origin.
	h.Set("Content-Security-Policy", h.Get("Content-Security-Policy")+"; sandbox")
	q.w.WriteHeader(http.StatusOK)
	_, _ = q.w.Write(body)
	return nil
}

// exposeFilename is the name the download is saved as: the uploaded one,
// printable and ending in .pdf, or one made from the inquiry's id.
func exposeFilename(name, id string) string {
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '/' || r == '\\' || r == '"' {
			return -1
		}
		return r
	}, strings.TrimSpace(name))
	if len([]rune(name)) > 200 {
		name = string([]rune(name)[:200])
	}
	if name == "" || strings.HasPrefix(name, ".") {
		name = "inquiry-" + id + "-expose.pdf"
	}
	if !strings.HasSuffix(strings.ToLower(name), ".pdf") {
		name += ".pdf"
	}
	return name
}

// reachRow is one target site on the inquiry's page.
type reachRow struct {
	Site     string
	LastPoll when
	Seen     when
}

// reach is the inquiry's way to its sites.
type reach struct {
	Rows         []reachRow
	Seen, Target int
}

// reachOf asks the broker how far the inquiry has got; a broker that
// cannot say (an older release) leaves the section out.
func (a *App) reachOf(q *req, b brokerv1.ResearcherServiceClient, id string) (*reach, error) {
	res, err := b.GetInquiryReach(q.ctx, &brokerv1.GetInquiryRequest{Id: id})
	if status.Code(err) == codes.Unimplemented {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := &reach{Seen: int(res.GetSeen()), Target: len(res.GetSites())}
	for _, s := range res.GetSites() {
		out.Rows = append(out.Rows, reachRow{Site: s.GetSiteId(), LastPoll: a.when(s.GetLastPollAt()), Seen: a.when(s.GetSeenAt())})
	}
	return out, nil
}
