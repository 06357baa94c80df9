package routes

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	brokerv1 "fris.dev/proto/broker/v1"
)

// replyBroker is a broker over a real gRPC connection, so that requests
// are marshalled as in production: a proto string that is not UTF-8 fails
// there, not in a fake.
type replyBroker struct {
	brokerv1.UnimplementedBrokerServiceServer
	got chan *brokerv1.PutReplyRequest
}

func (b *replyBroker) GetName(context.Context, *brokerv1.GetNameRequest) (*brokerv1.GetNameResponse, error) {
	return &brokerv1.GetNameResponse{Name: "Test Broker"}, nil
}

func (b *replyBroker) CheckBankToken(context.Context, *brokerv1.CheckBankTokenRequest) (*brokerv1.CheckBankTokenResponse, error) {
	return &brokerv1.CheckBankTokenResponse{}, nil
}

func (b *replyBroker) PutReply(_ context.Context, r *brokerv1.PutReplyRequest) (*brokerv1.PutReplyResponse, error) {
	b.got <- r
	return &brokerv1.PutReplyResponse{Message: "stored"}, nil
}

func grpcBroker(t *testing.T, srv brokerv1.BrokerServiceServer) brokerv1.BrokerServiceClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	brokerv1.RegisterBrokerServiceServer(gs, srv)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return brokerv1.NewBrokerServiceClient(cc)
}

// TestReplyContentTypeNotUTF8 sends a bank's reply with a Content-Type
// holding bytes that are not UTF-8: the broker gets it as valid UTF-8 (with
// U+FFFD, as the upload service does), and the bank its answer, not a 500.
func TestReplyContentTypeNotUTF8(t *testing.T) {
	srv := &replyBroker{got: make(chan *brokerv1.PutReplyRequest, 1)}
	mux := http.NewServeMux()
	Broker(mux, BrokerConfig{Prefix: "/broker/rest", Client: grpcBroker(t, srv), Researcher: http.NotFoundHandler(), Timeout: 5 * time.Second})
	req := httptest.NewRequest(http.MethodPut, "/broker/rest/searchbroker/inquiries/1/replies/bank@example.org", strings.NewReader("<reply/>"))
	req.Header.Set("Content-Type", "text/xml; charset=\"x\xffy\"")
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Body.String() != "stored" {
		t.Fatalf("= %d %q, want 200 \"stored\"", rec.Code, rec.Body.String())
	}
	got := (<-srv.got).GetContentType()
	if want := "text/xml; charset=\"x\uFFFDy\""; got != want || !utf8.ValidString(got) {
		t.Fatalf("content_type %q, want %q", got, want)
	}
}
