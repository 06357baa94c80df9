package routes

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	brokerv1 "fris.dev/proto/broker/v1"
)

// fakeBroker answers the calls these tests make; any other call panics
// through the nil embedded interface.
type fakeBroker struct {
	brokerv1.BrokerServiceClient
	hasExpose bool
	err       error
	lang      brokerv1.QueryLanguage
}

func (f *fakeBroker) GetName(context.Context, *brokerv1.GetNameRequest, ...grpc.CallOption) (*brokerv1.GetNameResponse, error) {
	return &brokerv1.GetNameResponse{Name: "Test Broker"}, nil
}

func (f *fakeBroker) HasExpose(context.Context, *brokerv1.HasExposeRequest, ...grpc.CallOption) (*brokerv1.HasExposeResponse, error) {
	return &brokerv1.HasExposeResponse{HasExpose: f.hasExpose}, f.err
}

func (f *fakeBroker) GetReferenceQuery(_ context.Context, r *brokerv1.GetReferenceQueryRequest, _ ...grpc.CallOption) (*brokerv1.Document, error) {
	f.lang = r.GetLanguage()
	return &brokerv1.Document{Body: []byte("q"), ContentType: "text/plain; charset=utf-8"}, nil
}

func serveBroker(t *testing.T, f *fakeBroker, method, target string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	mux := http.NewServeMux()
	Broker(mux, BrokerConfig{Prefix: "/broker/rest", Client: f, Researcher: http.NotFoundHandler(), Timeout: time.Second})
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	return rec
}

func TestHasExposeAnswersWhatConnectorsParse(t *testing.T) {
	for _, tc := range []struct {
		name     string
		f        *fakeBroker
		wantCode int
		wantBody string
	}{
		{"Has", &fakeBroker{hasExpose: true}, 200, "available"},
		// Exactly this body: the connector reads any other 404 as "has one".
		{"HasNot", &fakeBroker{}, 404, "unavailable"},
		{"BadID", &fakeBroker{err: status.Error(codes.InvalidArgument, "inquiry id must be a number")}, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := serveBroker(t, tc.f, http.MethodGet, "/broker/rest/searchbroker/inquiries/1/hasexpose")
			if rec.Code != tc.wantCode || (tc.wantBody != "" && rec.Body.String() != tc.wantBody) {
				t.Fatalf("= %d %q, want %d %q", rec.Code, rec.Body.String(), tc.wantCode, tc.wantBody)
			}
		})
	}
}

func TestQueryLanguageHeader(t *testing.T) {
	for _, tc := range []struct {
		header   string
		wantCode int
		want     brokerv1.QueryLanguage
	}{
		{"", 200, brokerv1.QueryLanguage_QUERY_LANGUAGE_QUERY},
		{"QUERY", 200, brokerv1.QueryLanguage_QUERY_LANGUAGE_QUERY},
		{"cql", 200, brokerv1.QueryLanguage_QUERY_LANGUAGE_CQL},
		{"SQL", 400, 0},
	} {
		f := &fakeBroker{}
		var hd []string
		if tc.header != "" {
			hd = []string{"query-language", tc.header}
		}
		rec := serveBroker(t, f, http.MethodGet, "/broker/rest/monitoring/referencequery", hd...)
		if rec.Code != tc.wantCode || f.lang != tc.want {
			t.Errorf("query-language %q = %d, language %v; want %d, %v", tc.header, rec.Code, f.lang, tc.wantCode, tc.want)
		}
	}
}

func TestBrokerRootAnswersReachability(t *testing.T) {
	rec := serveBroker(t, &fakeBroker{}, http.MethodGet, "/broker/")
	if rec.Code != 200 || rec.Body.String() != "Test Broker" {
		t.Fatalf("GET /broker/ = %d %q", rec.Code, rec.Body.String())
	}
	if rec := serveBroker(t, &fakeBroker{}, http.MethodPost, "/broker/"); rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST /broker/ = %d", rec.Code)
	}
}
