package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

func TestNewLevelsAndTraceIDs(t *testing.T) {
	if _, err := New(&bytes.Buffer{}, "loud", "x"); err == nil {
		t.Fatal("bad level accepted")
	}
	var buf bytes.Buffer
	log, err := New(&buf, "warn", "svc")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hidden")
	tid, _ := trace.TraceIDFromHex("0102030405060708090a0b0c0d0e0f10")
	sid, _ := trace.SpanIDFromHex("0102030405060708")
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid}))
	log.WarnContext(ctx, "shown", "k", 1)
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("want exactly one JSON record, got %q", buf.String())
	}
	if rec["msg"] != "shown" || rec["service"] != "svc" || rec["trace_id"] != tid.String() || rec["span_id"] != sid.String() {
		t.Fatalf("record = %v", rec)
	}
}
