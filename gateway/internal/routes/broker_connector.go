package routes

import (
	"context"
	"net/http"
	"path"
	"strings"

	"fris.dev/gateway/internal/apierr"
	brokerv1 "fris.dev/proto/broker/v1"
)

// connectorRoutes registers what the deployed connector (share-client's
// BrokerConnector) calls besides the spec's paths; docs/decisions.md says
// what each answers.
func (h *bankHandlers) connectorRoutes(handle func(string, methods), prefix string) {
	base := prefix + "/searchbroker"
	// Its broker address is the parent of the prefix (".../broker/"), which
	// it GETs to check that the broker is reachable.
	if root := path.Dir(prefix); root != "/" && root != "." {
		handle(root+"/{$}", methods{http.MethodGet: http.HandlerFunc(h.root)})
	}
	handle(base+"/inquiries/{id}/hasexpose", methods{http.MethodGet: http.HandlerFunc(h.hasExpose)})
	handle(base+"/banks/{email}/site/{name}", methods{http.MethodPut: http.HandlerFunc(h.siteName)})
	handle(base+"/siteNames", methods{http.MethodGet: http.HandlerFunc(h.siteNames)})
	handle(base+"/siteNames/{$}", methods{http.MethodGet: http.HandlerFunc(h.siteNames)})
	handle(prefix+"/test/inquiries/{id}", methods{http.MethodGet: http.HandlerFunc(h.testInquiry)})
	handle(prefix+"/monitoring", methods{http.MethodPut: http.HandlerFunc(h.monitoring)})
	handle(prefix+"/monitoring/referencequery", methods{http.MethodGet: http.HandlerFunc(h.referenceQuery)})
}

// root answers the connector's reachability check (any 2xx or 3xx passes)
// with the broker's name.
func (h *bankHandlers) root(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	writeText(w, http.StatusOK, h.name.get(r.Context()))
}

// exposeUnavailable is the exact body with which the connector's
// inquiryHasExpose reads a 404 as "no expose"; a 404 with any other body it
// reads as "has one".
const exposeUnavailable = "unavailable"

func (h *bankHandlers) hasExpose(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	res, err := h.client.HasExpose(ctx, &brokerv1.HasExposeRequest{InquiryId: r.PathValue("id")})
	switch {
	case err != nil:
		writeError(w, err)
	case res.GetHasExpose():
		writeText(w, http.StatusOK, "available")
	default:
		writeText(w, http.StatusNotFound, exposeUnavailable)
	}
}

func (h *bankHandlers) siteName(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	res, err := h.client.SetBankSiteName(ctx, &brokerv1.SetBankSiteNameRequest{Email: r.PathValue("email"), SiteName: r.PathValue("name")})
	if err != nil {
		writeError(w, err)
		return
	}
	writeText(w, http.StatusOK, res.GetMessage())
}

func (h *bankHandlers) siteNames(w http.ResponseWriter, r *http.Request) {
	h.sendDoc(w, r, func(ctx context.Context) (*brokerv1.Document, error) {
		return h.client.ListSiteNames(ctx, &brokerv1.ListSiteNamesRequest{})
	})
}

// queryLanguage reads the connector's "query-language" header (QUERY when
// absent, as the original broker defaults it).
func queryLanguage(r *http.Request) (brokerv1.QueryLanguage, bool) {
	switch v := strings.TrimSpace(r.Header.Get("query-language")); {
	case v == "" || strings.EqualFold(v, "QUERY"):
		return brokerv1.QueryLanguage_QUERY_LANGUAGE_QUERY, true
	case strings.EqualFold(v, "CQL"):
		return brokerv1.QueryLanguage_QUERY_LANGUAGE_CQL, true
	}
	return 0, false
}

func (h *bankHandlers) testInquiry(w http.ResponseWriter, r *http.Request) {
	h.queryDoc(w, r, func(ctx context.Context, lang brokerv1.QueryLanguage) (*brokerv1.Document, error) {
		return h.client.GetTestInquiry(ctx, &brokerv1.GetTestInquiryRequest{Language: lang})
	})
}

func (h *bankHandlers) referenceQuery(w http.ResponseWriter, r *http.Request) {
	h.queryDoc(w, r, func(ctx context.Context, lang brokerv1.QueryLanguage) (*brokerv1.Document, error) {
		return h.client.GetReferenceQuery(ctx, &brokerv1.GetReferenceQueryRequest{Language: lang})
	})
}

// queryDoc answers with the document get returns in the query language
// the request asks for.
func (h *bankHandlers) queryDoc(w http.ResponseWriter, r *http.Request, get func(context.Context, brokerv1.QueryLanguage) (*brokerv1.Document, error)) {
	lang, ok := queryLanguage(r)
	if !ok {
		apierr.WriteText(w, http.StatusBadRequest, "query-language must be QUERY or CQL")
		return
	}
	h.sendDoc(w, r, func(ctx context.Context) (*brokerv1.Document, error) { return get(ctx, lang) })
}

func (h *bankHandlers) monitoring(w http.ResponseWriter, r *http.Request) {
	if !h.admitted(w, r, "") {
		return
	}
	body, ok := readBody(w, r, apierr.WriteText)
	if !ok {
		return
	}
	ctx, cancel := h.ctx(r)
	defer cancel()
	res, err := h.client.PutMonitoring(ctx, &brokerv1.PutMonitoringRequest{Body: body})
	if err != nil {
		writeError(w, err)
		return
	}
	writeText(w, http.StatusOK, res.GetMessage())
}
