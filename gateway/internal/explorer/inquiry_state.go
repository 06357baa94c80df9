package explorer

import (
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	brokerv1 "fris.dev/proto/broker/v1"
)

// act runs a change of an inquiry's state from its page's button.
func (a *App) act(q *req, fn func(brokerv1.ResearcherServiceClient, string) error) error {
	b, err := a.broker()
	if err != nil {
		return err
	}
	q.r.Body = http.MaxBytesReader(q.w, q.r.Body, 8<<10)
	if err := q.r.ParseForm(); err != nil {
		return fail(http.StatusBadRequest, "error.badrequest")
	}
	if err := a.checkPost(q, q.r.PostForm); err != nil {
		return err
	}
	id := q.r.PathValue("id")
	if err := fn(b, id); err != nil {
		if st, _ := status.FromError(err); st.Code() == codes.InvalidArgument {
			return a.inquiryView(q, http.StatusConflict, st.Message())
		}
		return err
	}
	http.Redirect(q.w, q.r, inquiryHref(id), http.StatusSeeOther)
	return nil
}

func (a *App) releaseInquiry(q *req) error {
	return a.act(q, func(b brokerv1.ResearcherServiceClient, id string) error {
		_, err := b.ReleaseInquiry(q.ctx, &brokerv1.ReleaseInquiryRequest{Id: id})
		return err
	})
}

func (a *App) closeInquiry(q *req) error {
	return a.act(q, func(b brokerv1.ResearcherServiceClient, id string) error {
		_, err := b.CloseInquiry(q.ctx, &brokerv1.CloseInquiryRequest{Id: id})
		return err
	})
}
