package explorer

import (
	"net/http"
	"net/url"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	brokerv1 "fris.dev/proto/broker/v1"
)

// act runs a change of an inquiry's state from its page's button, once
// confirmed: confirmed names what the form lacks (a message key), "" when
// nothing; the page comes back with it.
func (a *App) act(q *req, confirmed func(url.Values) string, fn func(brokerv1.ResearcherServiceClient, string) error) error {
	b, err := a.broker()
	if err != nil {
		return err
	}
	q.r.Body = http.MaxBytesReader(q.w, q.r.Body, 8<<10)
	if err := q.r.ParseForm(); err != nil {
		return formError(err)
	}
	if err := a.checkPost(q, q.r.PostForm); err != nil {
		return err
	}
	if lacks := confirmed(q.r.PostForm); lacks != "" {
		return a.inquiryView(q, http.StatusBadRequest, "", lacks)
	}
	id := q.r.PathValue("id")
	if err := fn(b, id); err != nil {
		if st, _ := status.FromError(err); st.Code() == codes.InvalidArgument {
			return a.inquiryView(q, http.StatusConflict, st.Message(), "")
		}
		return err
	}
	http.Redirect(q.w, q.r, inquiryHref(id), http.StatusSeeOther)
	return nil
}

func (a *App) releaseInquiry(q *req) error {
	return a.act(q, func(f url.Values) string {
		if f.Get("confirm") != "yes" {
			return "inq.err.confirm.release"
		}
		// An inquiry without a condition asks for every donor: the page
		// asks for that too, so a forgotten query is not sent by a click.
		if f.Get("confirm_empty") != "yes" {
			in, err := a.ownInquiry(q)
			if err == nil && noCondition(in.GetQuery()) {
				return "inq.err.confirm.empty"
			}
		}
		return ""
	}, func(b brokerv1.ResearcherServiceClient, id string) error {
		_, err := b.ReleaseInquiry(q.ctx, &brokerv1.ReleaseInquiryRequest{Id: id})
		return err
	})
}

func (a *App) closeInquiry(q *req) error {
	return a.act(q, func(f url.Values) string {
		if f.Get("confirm") != "yes" {
			return "inq.err.confirm.close"
		}
		return ""
	}, func(b brokerv1.ResearcherServiceClient, id string) error {
		_, err := b.CloseInquiry(q.ctx, &brokerv1.CloseInquiryRequest{Id: id})
		return err
	})
}
