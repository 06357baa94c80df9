package routes

import (
	"context"
	"net/http"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"fris.dev/gateway/internal/apierr"
	brokerv1 "fris.dev/proto/broker/v1"
)

// bankRoutes registers the banks' API of the spec under
// <prefix>/searchbroker, and <prefix>/health. The bank's token travels
// in its Authorization header to the broker, which checks it.
func (h *bankHandlers) bankRoutes(handle func(string, methods), prefix string) {
	base := prefix + "/searchbroker"
	handle(prefix+"/health", methods{http.MethodGet: http.HandlerFunc(h.health)})
	handle(base+"/", methods{}) // unknown paths: 404 in text, with the Server header
	handle(base+"/name", methods{http.MethodGet: http.HandlerFunc(h.getName)})
	handle(base+"/banks/{email}", methods{http.MethodPut: http.HandlerFunc(h.register), http.MethodDelete: http.HandlerFunc(h.deleteBank)})
	handle(base+"/banks/{email}/status", methods{http.MethodGet: http.HandlerFunc(h.status)})
	handle(base+"/inquiries", methods{http.MethodGet: http.HandlerFunc(h.list)})
	for path, part := range map[string]brokerv1.InquiryPart{
		"": brokerv1.InquiryPart_WHOLE, "/query": brokerv1.InquiryPart_QUERY, "/contact": brokerv1.InquiryPart_CONTACT,
		"/info": brokerv1.InquiryPart_INFO, "/expose": brokerv1.InquiryPart_EXPOSE,
	} {
		handle(base+"/inquiries/{id}"+path, methods{http.MethodGet: h.part(part)})
	}
	handle(base+"/exposes/{id}", methods{http.MethodGet: http.HandlerFunc(h.expose)})
	handle(base+"/inquiries/{id}/replies/{email}", methods{http.MethodPut: http.HandlerFunc(h.reply)})
}

// health answers OK while the broker answers.
func (h *bankHandlers) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	if _, err := h.client.GetName(ctx, &brokerv1.GetNameRequest{}); err != nil {
		apierr.WriteText(w, http.StatusServiceUnavailable, "the search broker does not answer")
		return
	}
	writeText(w, http.StatusOK, "OK")
}

func (h *bankHandlers) getName(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	res, err := h.client.GetName(ctx, &brokerv1.GetNameRequest{})
	if err != nil {
		writeError(w, err)
		return
	}
	h.name.cur.Store(&nameAt{name: res.GetName(), at: time.Now()})
	w.Header().Set("Server", res.GetName())
	writeText(w, http.StatusOK, res.GetName())
}

func (h *bankHandlers) register(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	res, err := h.client.RegisterBank(ctx, &brokerv1.RegisterBankRequest{Email: r.PathValue("email")})
	challenge := func() { w.Header().Set("WWW-Authenticate", "SamplyRegistration AuthCode") }
	switch {
	case status.Code(err) == codes.Unauthenticated:
		challenge()
		writeError(w, err)
	case err != nil:
		writeError(w, err)
	case res.GetActivationRequired():
		challenge()
		apierr.WriteText(w, http.StatusUnauthorized, "an activation code was sent to the bank's email address; repeat the request with Authorization: SamplyRegistration <code>")
	default:
		w.Header().Set("Cache-Control", "no-store")
		writeText(w, http.StatusCreated, res.GetToken())
	}
}

func (h *bankHandlers) deleteBank(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	if _, err := h.client.DeleteBank(ctx, &brokerv1.DeleteBankRequest{Email: r.PathValue("email")}); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *bankHandlers) status(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	res, err := h.client.GetBankStatus(ctx, &brokerv1.GetBankStatusRequest{Email: r.PathValue("email")})
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if res.GetStatus() == brokerv1.BankStatus_ACTIVE {
		writeText(w, http.StatusOK, "active")
		return
	}
	writeText(w, http.StatusAccepted, "pending")
}

func (h *bankHandlers) list(w http.ResponseWriter, r *http.Request) {
	h.sendDoc(w, r, func(ctx context.Context) (*brokerv1.Document, error) {
		return h.client.ListInquiries(ctx, &brokerv1.ListInquiriesRequest{})
	})
}

func (h *bankHandlers) part(p brokerv1.InquiryPart) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.sendDoc(w, r, func(ctx context.Context) (*brokerv1.Document, error) {
			return h.client.GetInquiryPart(ctx, &brokerv1.GetInquiryPartRequest{InquiryId: r.PathValue("id"), Part: p})
		})
	})
}

func (h *bankHandlers) expose(w http.ResponseWriter, r *http.Request) {
	h.sendDoc(w, r, func(ctx context.Context) (*brokerv1.Document, error) {
		return h.client.GetExpose(ctx, &brokerv1.GetExposeRequest{ExposeId: r.PathValue("id")})
	})
}

// sendDoc answers with the document get returns.
func (h *bankHandlers) sendDoc(w http.ResponseWriter, r *http.Request, get func(context.Context) (*brokerv1.Document, error)) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	d, err := get(ctx)
	if err != nil {
		writeError(w, err)
		return
	}
	writeDoc(w, d)
}

// admitted asks the broker to check the request's bank token (the bank
// of email, when set) before the body is read, as the upload's routes do
// (uploadHandlers.admitted); false when it has answered.
func (h *bankHandlers) admitted(w http.ResponseWriter, r *http.Request, email string) bool {
	ctx, cancel := h.ctx(r)
	defer cancel()
	if _, err := h.client.CheckBankToken(ctx, &brokerv1.CheckBankTokenRequest{BankEmail: email}); err != nil {
		writeError(w, err)
		return false
	}
	return true
}

func (h *bankHandlers) reply(w http.ResponseWriter, r *http.Request) {
	if !h.admitted(w, r, r.PathValue("email")) {
		return
	}
	body, ok := readBody(w, r, apierr.WriteText)
	if !ok {
		return
	}
	ctx, cancel := h.ctx(r)
	defer cancel()
	res, err := h.client.PutReply(ctx, &brokerv1.PutReplyRequest{
		InquiryId: r.PathValue("id"), BankEmail: r.PathValue("email"), Body: body, ContentType: headerString(r, "Content-Type"),
	})
	if err != nil {
		writeError(w, err)
		return
	}
	writeText(w, http.StatusOK, res.GetMessage())
}
