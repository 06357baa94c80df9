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
	// fpdf keeps fonts and images in maps: the same bytes every time need a
	// sorted catalog, which a single comparison would catch only by luck.
	for i := 0; i < 20; i++ {
		if !bytes.Equal(pdf, ExposePDF()) {
			t.Fatalf("the demo expose differs between runs (run %d)", i+2)
		}
	}
	c := Content([]string{"charite", "dresden"})
	if c.GetLabel() != Label || len(c.GetTargetSites()) != 2 {
		t.Fatalf("content = %v", c)
	}
}
