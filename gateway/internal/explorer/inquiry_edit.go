package explorer

import (
	"errors"
	"net/http"

	"fris.dev/gateway/internal/explorer/querybuild"
	brokerv1 "fris.dev/proto/broker/v1"
)

func (a *App) editInquiry(q *req) error {
	in, err := a.ownInquiry(q)
	if err != nil {
		return err
	}
	if in.GetStatus() == brokerv1.InquiryStatus_CLOSED {
		return fail(http.StatusConflict, "inq.err.closed")
	}
	f, err := a.storedForm(q, in)
	if err != nil {
		return err
	}
	return a.formPage(q, f, http.StatusOK)
}

// storedForm is the form of an inquiry as stored.
func (a *App) storedForm(q *req, in *brokerv1.Inquiry) (*inquiryForm, error) {
	var err error
	ct := in.GetContact()
	f := &inquiryForm{ID: in.GetId(), Action: inquiryHref(in.GetId()), Label: in.GetLabel(), Description: in.GetDescription(),
		Title: ct.GetTitle(), First: ct.GetFirstname(), Last: ct.GetLastname(), Email: ct.GetEmail(), Phone: ct.GetPhone(), Org: ct.GetOrganization(),
		Expires: day(in.GetExpiresAt()), Expose: in.GetExpose()}
	if f.Sites, _, err = a.targetSites(q, in.GetTargetSites()); err != nil {
		return nil, err
	}
	if f.B, err = a.builderOf(q, in.GetQuery()); err != nil {
		return nil, err
	}
	return f, nil
}

// builderOf loads a stored query into the builder; a query it cannot show
// is kept as it is (and shown as XML).
func (a *App) builderOf(q *req, doc string) (*querybuild.Builder, error) {
	kept := &querybuild.Builder{Op: "And", Kept: doc}
	s, err := querybuild.ShapeOf(doc)
	if err != nil {
		return kept, nil
	}
	b := &querybuild.Builder{Op: s.Op}
	for i, nodes := range s.Groups {
		g := &querybuild.Group{ID: querybuild.NewID(), Op: s.GroupOps[i]}
		for _, n := range nodes {
			e, err := a.element(q, querybuild.KeyOf(n))
			if err != nil {
				return nil, err
			}
			if e == nil {
				return kept, nil
			}
			c, ok := querybuild.CondOf(n, e)
			if !ok {
				return kept, nil
			}
			g.Conds = append(g.Conds, c)
		}
		b.Groups = append(b.Groups, g)
	}
	return b, nil
}

func (a *App) updateInquiry(q *req) error {
	b, err := a.broker()
	if err != nil {
		return err
	}
	form, pdf, name, err := a.readForm(q)
	tooBig := errors.Is(err, errFormTooLarge)
	if err != nil && !tooBig {
		return err
	}
	in, err := a.ownInquiry(q)
	if err != nil {
		return err
	}
	if tooBig {
		f, err := a.storedForm(q, in)
		if err != nil {
			return err
		}
		return a.formTooLarge(q, form, f)
	}
	v := a.view(q, "inq.edit")
	f, c, err := a.formOf(q, v, form, pdf)
	if err != nil {
		return err
	}
	f.ID, f.Action, f.Expose = in.GetId(), inquiryHref(in.GetId()), in.GetExpose()
	c.ExposeFilename = name
	if removing(form) || catAdding(form) {
		return a.formPage(q, f.edited(), http.StatusOK)
	}
	if len(f.Errors) == 0 {
		_, err := b.UpdateInquiry(q.ctx, &brokerv1.UpdateInquiryRequest{Id: in.GetId(), Content: c})
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
