package explorer

import (
	"errors"
	"net/http"
	"strings"

	"fris.dev/gateway/internal/explorer/querybuild"
	brokerv1 "fris.dev/proto/broker/v1"
)

func (a *App) newInquiry(q *req) error {
	f := &inquiryForm{Action: InquiriesPath, Email: q.sess.User.Email}
	// The user's name as the contact's, split at its last space.
	name := strings.TrimSpace(q.sess.User.Name)
	if name != "" && name != q.sess.User.Email {
		if i := strings.LastIndex(name, " "); i > 0 {
			f.First, f.Last = name[:i], name[i+1:]
		} else {
			f.Last = name
		}
	}
	var err error
	if f.Sites, _, err = a.targetSites(q, nil); err != nil {
		return err
	}
	// A data element's page links here to start a query with it.
	if urn := q.r.URL.Query().Get("urn"); urn != "" {
		g := &querybuild.Group{ID: querybuild.NewID(), Op: "And", Conds: []*querybuild.Cond{{ID: querybuild.NewID(), URN: urn}}}
		f.B = &querybuild.Builder{Op: "And", Groups: []*querybuild.Group{g}}
		if err := a.lookup(q, f.B); err != nil {
			return err
		}
		if g.Conds[0].Err != "" {
			f.B.Groups[0].Conds = nil
		}
	}
	return a.formPage(q, f, http.StatusOK)
}

func (a *App) createInquiry(q *req) error {
	b, err := a.broker()
	if err != nil {
		return err
	}
	form, pdf, name, err := a.readForm(q)
	if errors.Is(err, errFormTooLarge) {
		return a.formTooLarge(q, form, &inquiryForm{Action: InquiriesPath})
	}
	if err != nil {
		return err
	}
	v := a.view(q, "inq.new")
	f, c, err := a.formOf(q, v, form, pdf)
	if err != nil {
		return err
	}
	f.Action = InquiriesPath
	c.ExposeFilename = name
	if removing(form) || catAdding(form) {
		return a.formPage(q, f.edited(), http.StatusOK)
	}
	if len(f.Errors) == 0 {
		in, err := b.CreateInquiry(q.ctx, &brokerv1.CreateInquiryRequest{Content: c})
		if err == nil {
			http.Redirect(q.w, q.r, inquiryHref(in.GetId()), http.StatusSeeOther)
			return nil
		}
		if err := refused(v, f, err); err != nil {
			return err
		}
	}
	return a.formPage(q, f, http.StatusBadRequest)
}
