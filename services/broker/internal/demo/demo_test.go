package demo

import (
	"bytes"
	"strings"
	"testing"

	"fris.dev/pkg/samplyquery"
)

func TestDemoInquiryIsValid(t *testing.T) {
	if _, err := samplyquery.Parse([]byte(Query)); err != nil {
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

// The deployed connector files an inquiry's targets by German words it
// finds in SearchFor (lower-cased "patienten", "biomaterial", "klinische");
// anything else it logs as an unknown requested entity.
func TestDemoSearchForIsWhatConnectorsRecognise(t *testing.T) {
	known := []string{"patienten", "biomaterial", "klinische"}
	for _, s := range Content(nil).GetSearchFor() {
		ok := false
		for _, k := range known {
			ok = ok || strings.Contains(strings.ToLower(s), k)
		}
		if !ok {
			t.Errorf("SearchFor %q holds none of %v", s, known)
		}
	}
}
