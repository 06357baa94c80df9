package routes

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	brokerv1 "fris.dev/proto/broker/v1"
	uploadv1 "fris.dev/proto/upload/v1"
)

// countingBody counts the bytes a handler reads.
type countingBody struct {
	r    io.Reader
	read atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read.Add(int64(n))
	return n, err
}

func (b *countingBody) Close() error { return nil }

type checkUpload struct {
	uploadv1.UploadServiceClient
	check error
	put   atomic.Int64
}

func (c *checkUpload) CheckCredentials(context.Context, *uploadv1.CheckCredentialsRequest, ...grpc.CallOption) (*uploadv1.CheckCredentialsResponse, error) {
	return &uploadv1.CheckCredentialsResponse{}, c.check
}

func (c *checkUpload) PutPatient(_ context.Context, r *uploadv1.PutPatientRequest, _ ...grpc.CallOption) (*uploadv1.PutPatientResponse, error) {
	c.put.Add(int64(len(r.GetDocument())))
	return &uploadv1.PutPatientResponse{Outcome: uploadv1.PutPatientResponse_CREATED}, nil
}

func (c *checkUpload) PutUploadStats(_ context.Context, r *uploadv1.PutUploadStatsRequest, _ ...grpc.CallOption) (*uploadv1.PutUploadStatsResponse, error) {
	c.put.Add(int64(len(r.GetDocument())))
	return &uploadv1.PutUploadStatsResponse{}, nil
}

type checkBroker struct {
	fakeBroker
	check error
	put   atomic.Int64
}

func (c *checkBroker) CheckBankToken(context.Context, *brokerv1.CheckBankTokenRequest, ...grpc.CallOption) (*brokerv1.CheckBankTokenResponse, error) {
	return &brokerv1.CheckBankTokenResponse{}, c.check
}

func (c *checkBroker) PutReply(_ context.Context, r *brokerv1.PutReplyRequest, _ ...grpc.CallOption) (*brokerv1.PutReplyResponse, error) {
	c.put.Add(int64(len(r.GetBody())))
	return &brokerv1.PutReplyResponse{Message: "ok"}, nil
}

func (c *checkBroker) PutMonitoring(_ context.Context, r *brokerv1.PutMonitoringRequest, _ ...grpc.CallOption) (*brokerv1.PutMonitoringResponse, error) {
	c.put.Add(int64(len(r.GetBody())))
	return &brokerv1.PutMonitoringResponse{Message: "ok"}, nil
}

// The routes that take a body from a client with credentials (upload's
// Basic, a bank's token) have them checked before they read a byte of
// it: refused, the body is never read; admitted, it is read whole and
// sent on.
func TestBodyReadOnlyAfterCredentials(t *testing.T) {
	const size = 1 << 20
	refuse := status.Error(codes.Unauthenticated, "wrong username or password")
	for _, tc := range []struct {
		name, method, path string
		serve              func(mux *http.ServeMux, check error) (put func() int64)
	}{
		{"upload patient", http.MethodPut, "/dktk/sites/s_teiler/t/pats/p1", uploadRoutes},
		{"upload stats", http.MethodPut, "/dktk/sites/s/teiler/t/uploadStats", uploadRoutes},
		{"bank reply", http.MethodPut, "/broker/rest/searchbroker/inquiries/1/replies/bank@example.org", brokerRoutes},
		{"bank monitoring", http.MethodPut, "/broker/rest/monitoring", brokerRoutes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, check := range []error{refuse, nil} {
				mux := http.NewServeMux()
				put := tc.serve(mux, check)
				body := &countingBody{r: strings.NewReader(strings.Repeat("x", size))}
				req := httptest.NewRequest(tc.method, tc.path, nil)
				req.Body, req.ContentLength = body, size
				rec := httptest.NewRecorder()
				mux.ServeHTTP(rec, req)
				if check != nil {
					if rec.Code != http.StatusUnauthorized || body.read.Load() != 0 || put() != 0 {
						t.Fatalf("refused credentials: %d, %d bytes read, %d sent on; want 401, none", rec.Code, body.read.Load(), put())
					}
					continue
				}
				if rec.Code != http.StatusOK && rec.Code != http.StatusCreated || put() != size {
					t.Fatalf("admitted: %d %q, %d bytes sent on; want success, %d", rec.Code, rec.Body.String(), put(), size)
				}
			}
		})
	}
}

func uploadRoutes(mux *http.ServeMux, check error) func() int64 {
	c := &checkUpload{check: check}
	Upload(mux, UploadConfig{Prefix: "/dktk", Client: c, Timeout: 5 * time.Second})
	return c.put.Load
}

func brokerRoutes(mux *http.ServeMux, check error) func() int64 {
	c := &checkBroker{check: check}
	Broker(mux, BrokerConfig{Prefix: "/broker/rest", Client: c, Researcher: http.NotFoundHandler(), Timeout: 5 * time.Second})
	return c.put.Load
}
