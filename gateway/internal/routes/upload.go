package routes

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"fris.dev/gateway/internal/apierr"
	uploadv1 "fris.dev/proto/upload/v1"
)

// UploadConfig is what group C needs.
type UploadConfig struct {
	Prefix string
	// Client is the upload service; nil answers every group C path with 503.
	Client  uploadv1.UploadServiceClient
	Timeout time.Duration
}

// Upload registers group C under <prefix>/sites/. Both path forms are
// parsed here because ServeMux patterns cannot match a wildcard inside a
// segment ({site}_teiler):
//
//	<prefix>/sites/{site}_teiler/{teiler}/<op>   (the spec)
//	<prefix>/sites/{site}/teiler/{teiler}/<op>   (the real connector)
//
// with <op> one of uploadStats, pats/{id}, patsPrefix/{prefix}. Errors are
// plain text; 401 carries the Basic challenge. Bodies go to the upload
// service as sent, with their Content-Type, and the uploadStats document
// comes back from it ready to send: the service owns the XML both ways.
func Upload(mux Mux, c UploadConfig) {
	base := strings.TrimRight(c.Prefix, "/") + "/sites/"
	if c.Client == nil {
		mux.HandleFunc(base, func(w http.ResponseWriter, r *http.Request) {
			apierr.WriteText(w, http.StatusServiceUnavailable, "the central upload is not configured")
		})
		return
	}
	h := &uploadHandlers{client: c.Client, timeout: c.Timeout}
	mux.HandleFunc(base, func(w http.ResponseWriter, r *http.Request) {
		p, ok := ParseUploadPath(strings.TrimPrefix(r.URL.EscapedPath(), base))
		if !ok {
			apierr.WriteText(w, http.StatusNotFound, "no such path")
			return
		}
		var m methods
		switch p.Op {
		case OpUploadStats:
			m = methods{http.MethodGet: h.getStats(p), http.MethodPut: h.putStats(p)}
		case OpPatient:
			put := h.putPatient(p)
			m = methods{http.MethodPost: put, http.MethodPut: put, http.MethodDelete: h.deletePatient(p)}
		case OpPatientPrefix:
			m = methods{http.MethodDelete: h.deletePrefix(p)}
		}
		m.ServeHTTP(w, r)
	})
}

// Upload path operations.
const (
	OpUploadStats   = "uploadStats"
	OpPatient       = "pats"
	OpPatientPrefix = "patsPrefix"
)

// UploadPath is a parsed group C path below <prefix>/sites/.
type UploadPath struct {
	Site, Teiler, Op string
	// Arg is the patient id or prefix, decoded as java.net.URLEncoder
	// encodes (see argUnescape).
	Arg string
}

// argUnescape decodes a patient id or prefix segment. The connector
// encodes them with java.net.URLEncoder, which writes a space as '+' and a
// '+' as %2B, so '+' here is a space; %20 is one too.
func argUnescape(raw string) (string, bool) {
	d, err := url.QueryUnescape(raw)
	return d, err == nil && d != ""
}

// ParseUploadPath reads the escaped path below <prefix>/sites/. Segments
// are split before decoding, so an id with an encoded '/' stays one id.
func ParseUploadPath(escaped string) (UploadPath, bool) {
	raw := strings.Split(escaped, "/")
	segs := make([]string, len(raw))
	for i, s := range raw {
		d, err := url.PathUnescape(s)
		if err != nil || d == "" {
			return UploadPath{}, false
		}
		segs[i] = d
	}
	// op reads the segments after the teiler: rest decoded, raw as sent.
	op := func(rest, raw []string) (string, string, bool) {
		switch {
		case len(rest) == 1 && rest[0] == OpUploadStats:
			return OpUploadStats, "", true
		case len(rest) == 2 && (rest[0] == OpPatient || rest[0] == OpPatientPrefix):
			arg, ok := argUnescape(raw[1])
			return rest[0], arg, ok
		}
		return "", "", false
	}
	// The connector's form first: a site id may itself end in "_teiler".
	if len(segs) >= 4 && segs[1] == "teiler" {
		if o, arg, ok := op(segs[3:], raw[3:]); ok {
			return UploadPath{Site: segs[0], Teiler: segs[2], Op: o, Arg: arg}, true
		}
	}
	if len(segs) >= 3 && len(raw[0]) > len("_teiler") && strings.HasSuffix(raw[0], "_teiler") {
		if o, arg, ok := op(segs[2:], raw[2:]); ok {
			return UploadPath{Site: strings.TrimSuffix(segs[0], "_teiler"), Teiler: segs[1], Op: o, Arg: arg}, true
		}
	}
	return UploadPath{}, false
}

func (p UploadPath) teiler() *uploadv1.Teiler {
	return &uploadv1.Teiler{SiteId: p.Site, TeilerId: p.Teiler}
}

type uploadHandlers struct {
	client  uploadv1.UploadServiceClient
	timeout time.Duration
}

func (h *uploadHandlers) ctx(r *http.Request) (context.Context, context.CancelFunc) {
	return forwardingCtx(r, h.timeout)
}

func uploadError(w http.ResponseWriter, err error) {
	if status.Code(err) == codes.Unauthenticated {
		w.Header().Set("WWW-Authenticate", `Basic realm="fris"`)
	}
	code, msg := apierr.FromGRPC(err)
	apierr.SetRetryAfter(w.Header(), err)
	apierr.WriteText(w, code, msg)
}

// admitted asks the service to check the request's credentials (and the
// media type of the body it carries) before the body is read: a body
// costs the gateway memory and a connection for as long as it takes to
// arrive, which nobody without valid credentials may make it spend
// (docs/security.md, "Limits"). The service checks them again with the
// body; a credential verified here is remembered there, so that costs no
// second hash. False when it has answered.
func (h *uploadHandlers) admitted(w http.ResponseWriter, r *http.Request, p UploadPath, body uploadv1.CheckCredentialsRequest_Body) bool {
	ctx, cancel := h.ctx(r)
	defer cancel()
	if _, err := h.client.CheckCredentials(ctx, &uploadv1.CheckCredentialsRequest{
		Teiler: p.teiler(), ContentType: headerString(r, "Content-Type"), Body: body,
	}); err != nil {
		uploadError(w, err)
		return false
	}
	return true
}

func (h *uploadHandlers) putPatient(p UploadPath) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !h.admitted(w, r, p, uploadv1.CheckCredentialsRequest_PATIENT) {
			return
		}
		body, ok := readBody(w, r, apierr.WriteText)
		if !ok {
			return
		}
		ctx, cancel := h.ctx(r)
		defer cancel()
		res, err := h.client.PutPatient(ctx, &uploadv1.PutPatientRequest{
			Teiler: p.teiler(), PatientId: p.Arg, Document: body, ContentType: headerString(r, "Content-Type"),
		})
		if err != nil {
			uploadError(w, err)
			return
		}
		switch res.GetOutcome() {
		case uploadv1.PutPatientResponse_CREATED:
			w.WriteHeader(http.StatusCreated)
		case uploadv1.PutPatientResponse_REPLACED:
			w.WriteHeader(http.StatusOK)
		case uploadv1.PutPatientResponse_REJECTED:
			apierr.WriteText(w, http.StatusUnprocessableEntity, problemText(res.GetProblems()))
		default:
			apierr.WriteText(w, http.StatusInternalServerError, "internal error")
		}
	}
}

// problemText is the 422 body: one line per refused value.
func problemText(ps []*uploadv1.ValueProblem) string {
	var b strings.Builder
	b.WriteString("values refused by the metadata registry:\n")
	for _, p := range ps {
		b.WriteString(p.GetWhere())
		b.WriteString(": ")
		b.WriteString(p.GetMdrKey())
		b.WriteString(" = ")
		b.WriteString(strconv.Quote(p.GetValue()))
		b.WriteString(": ")
		b.WriteString(p.GetReason())
		b.WriteByte('\n')
	}
	return b.String()
}

func (h *uploadHandlers) deletePatient(p UploadPath) http.HandlerFunc {
	return h.noContent(func(ctx context.Context) error {
		_, err := h.client.DeletePatient(ctx, &uploadv1.DeletePatientRequest{Teiler: p.teiler(), PatientId: p.Arg})
		return err
	})
}

func (h *uploadHandlers) deletePrefix(p UploadPath) http.HandlerFunc {
	return h.noContent(func(ctx context.Context) error {
		_, err := h.client.DeletePatientsByPrefix(ctx, &uploadv1.DeletePatientsByPrefixRequest{Teiler: p.teiler(), Prefix: p.Arg})
		return err
	})
}

// noContent answers 204 once call, an RPC without a body to send back, has
// succeeded.
func (h *uploadHandlers) noContent(call func(context.Context) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := h.ctx(r)
		defer cancel()
		if err := call(ctx); err != nil {
			uploadError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

func (h *uploadHandlers) getStats(p UploadPath) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := h.ctx(r)
		defer cancel()
		res, err := h.client.GetUploadStats(ctx, &uploadv1.GetUploadStatsRequest{Teiler: p.teiler()})
		if err != nil {
			uploadError(w, err)
			return
		}
		// The service renders the document, the gateway only sends it.
		body := res.GetDocument()
		hd := w.Header()
		hd.Set("Content-Type", res.GetContentType())
		hd.Set("Content-Length", strconv.Itoa(len(body)))
		hd.Set("Cache-Control", "no-store")
		// The connector reads the server's clock from Date; net/http sets it,
		// set here so it is taken right after the service made the document.
		hd.Set("Date", time.Now().UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_, _ = w.Write(body)
		}
	}
}

func (h *uploadHandlers) putStats(p UploadPath) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !h.admitted(w, r, p, uploadv1.CheckCredentialsRequest_UPLOAD_STATS) {
			return
		}
		body, ok := readBody(w, r, apierr.WriteText)
		if !ok {
			return
		}
		ctx, cancel := h.ctx(r)
		defer cancel()
		if _, err := h.client.PutUploadStats(ctx, &uploadv1.PutUploadStatsRequest{
			Teiler: p.teiler(), Document: body, ContentType: headerString(r, "Content-Type"),
		}); err != nil {
			uploadError(w, err)
			return
		}
		w.WriteHeader(http.StatusOK)
	}
}
