package demo

import (
	"bytes"
	"testing"

	"fris.dev/services/broker/internal/query"
)

func TestDemoInquiryIsValid(t *testing.T) {
	if _, err := query.Parse([]byte(Query)); err != nil {
		t.Fatalf("demo query: %v", err)
	}
	pdf := ExposePDF()
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) || !bytes.Contains(pdf[len(pdf)-16:], []byte("%%EOF")) || len(pdf) > 64<<10 {
		t.Fatalf("demo expose is no small PDF: %d bytes, starts %q", len(pdf), pdf[:8])
	}
	if !bytes.Equal(pdf, ExposePDF()) {
		t.Fatal("the demo expose differs between runs")
	}
	c := Content([]string{"charite", "dresden"})
	if c.GetLabel() != Label || len(c.GetTargetSites()) != 2 {
		t.Fatalf("content = %v", c)
	}
}
