package patient

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	f.Add(fullDoc)
	for _, tc := range errorCases {
		f.Add(tc.in)
	}
	f.Add(doc(attrXML("urn:a:dataelement:1:1", "1") + `<c:Case id="c"><s:Sample id="s"><t:Container designation="d"/></s:Sample></c:Case>`))
	f.Add(`<patient xmlns="http://schema.samply.de/ccp/Patient" id="x"/>`)
	f.Add(doc(`<a:Attribute><k:MdrKey>urn:a</k:MdrKey><lo:LowerBound>1</lo:LowerBound></a:Attribute>`))
	if demo, err := os.ReadFile("../../demo/patient.xml"); err == nil {
		f.Add(string(demo))
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := Parse(strings.NewReader(in), Limits{MaxBytes: 1 << 16, MaxDepth: 16})
		if err != nil {
			var ie *InvalidError
			switch {
			case errors.Is(err, ErrTooLarge):
			case !errors.As(err, &ie):
				t.Fatalf("error of an unexpected kind: %T %v", err, err)
			case ie.Reason == "" || !oneShortLine(ie.Reason):
				t.Fatalf("reason is not one short line: %q", ie.Reason)
			}
			return
		}
		if p.ID == "" {
			t.Fatal("parsed a patient without id")
		}
		attrs := 0
		check := func(as []Attribute) {
			for _, a := range as {
				attrs++
				if a.MdrKey == "" || strings.TrimSpace(a.MdrKey) != a.MdrKey {
					t.Fatalf("attribute without a clean MdrKey: %+v", a)
				}
				if !a.HasValue && a.LowerBound == nil && a.UpperBound == nil {
					t.Fatalf("attribute without value or bound: %+v", a)
				}
			}
		}
		var container func(Container)
		container = func(c Container) {
			check(c.Attributes)
			for _, cc := range c.Containers {
				container(cc)
			}
		}
		samples := 0
		sample := func(s Sample) {
			samples++
			if s.ID == "" {
				t.Fatal("sample without id")
			}
			check(s.Attributes)
			for _, c := range s.Containers {
				container(c)
			}
		}
		check(p.Attributes)
		for _, c := range p.Cases {
			if c.ID == "" {
				t.Fatal("case without id")
			}
			check(c.Attributes)
			for _, s := range c.Samples {
				sample(s)
			}
		}
		for _, s := range p.Samples {
			sample(s)
		}
		cases, gotSamples, gotAttrs := p.Counts()
		if cases != len(p.Cases) || gotSamples != samples || gotAttrs != attrs {
			t.Fatalf("Counts = %d %d %d, walked %d %d %d", cases, gotSamples, gotAttrs, len(p.Cases), samples, attrs)
		}
		if vals := p.Values(); len(vals) < attrs {
			t.Fatalf("%d values for %d attributes", len(vals), attrs)
		}
	})
}
