package patient

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	f.Add(fullDoc)
	f.Add(jaxbDoc)
	for _, tc := range errorCases {
		f.Add(tc.in)
	}
	// JAXB's shapes: containers in every entity and nested, Ref/EntityId,
	// nil and empty values, prefixes up to ns17, schemaLocation.
	f.Add(doc(attrXML("urn:a:dataelement:1:1", "1") + `<c:Case id="c"><t:Container designation="d"/></c:Case><s:Sample id="s"><t:Container designation="d"/></s:Sample>`))
	f.Add(doc(`<t:Container id="a" designation="A"><t:Container id="b" designation="B"><t:Container id="c" designation="C"><Ref><EntityId>x</EntityId></Ref></t:Container></t:Container></t:Container>`))
	f.Add(doc(`<Ref><EntityId>c1</EntityId><EntityId>s1</EntityId></Ref><Ref/><c:Case id="c1"><Ref><EntityId>s1</EntityId></Ref></c:Case>`))
	f.Add(doc(`<a:Attribute><k:MdrKey>urn:a</k:MdrKey><v:Value xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:nil="true"/></a:Attribute><a:Attribute><k:MdrKey>urn:b</k:MdrKey><v:Value></v:Value></a:Attribute>`))
	f.Add(`<ns17:Patient xmlns:ns16="http://schema.samply.de/ccp/Case" xmlns:ns17="http://schema.samply.de/ccp/Patient" xmlns:ns2="http://schema.samply.de/ccp/Container" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://schema.samply.de/ccp/Patient Patient.xsd" id="a==" idType="x"><ns2:Container id="t" designation="Tumour"/><ns16:Case id="c"><ns2:Container id="h" designation="Histology"/></ns16:Case></ns17:Patient>`)
	f.Add(`<patient xmlns="http://schema.samply.de/ccp/Patient" id="x"/>`)
	f.Add(doc(`<a:Attribute><k:MdrKey>urn:a</k:MdrKey><lo:LowerBound>1</lo:LowerBound></a:Attribute>`))
	f.Add(doc(`<a:Attribute><k:MdrKey>urn:a</k:MdrKey><v:UpperBound>1</v:UpperBound></a:Attribute>`))
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
		var walked Counts
		values := 0
		var entity func(e *Entity)
		entity = func(e *Entity) {
			for _, a := range e.Attributes {
				walked.Attributes++
				if a.MdrKey == "" || strings.TrimSpace(a.MdrKey) != a.MdrKey {
					t.Fatalf("attribute without a clean MdrKey: %+v", a)
				}
				if !a.HasValue && a.LowerBound == nil && a.UpperBound == nil {
					t.Fatalf("attribute without value or bound: %+v", a)
				}
				if a.Nil && (a.Value != "" || !a.HasValue) {
					t.Fatalf("nil attribute with a value: %+v", a)
				}
				for _, s := range []*string{&a.Value, a.LowerBound, a.UpperBound} {
					if s != nil && *s != "" && (s != &a.Value || !a.Nil) {
						values++
					}
				}
			}
			walked.Refs += len(e.Refs)
			walked.Containers += len(e.Containers)
			for i := range e.Containers {
				entity(&e.Containers[i].Entity)
			}
		}
		entity(&p.Entity)
		for _, c := range p.Cases {
			if c.ID == "" {
				t.Fatal("case without id")
			}
			walked.Cases++
			entity(&c.Entity)
		}
		for _, s := range p.Samples {
			if s.ID == "" {
				t.Fatal("sample without id")
			}
			walked.Samples++
			entity(&s.Entity)
		}
		if got := p.Counts(); got != walked {
			t.Fatalf("Counts = %+v, walked %+v", got, walked)
		}
		if vals := p.Values(); len(vals) != values {
			t.Fatalf("%d values to check, want %d", len(vals), values)
		}
	})
}
