package patient

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	f.Add(doc(attrXML("urn:a:dataelement:1:1", "1") + `<c:Case id="c"><s:Sample id="s"><t:Container designation="d"/></s:Sample></c:Case>`))
	f.Add(`<patient xmlns="http://schema.samply.de/ccp/Patient" id="x"/>`)
	f.Add(doc(`<a:Attribute><k:MdrKey>urn:a</k:MdrKey><lo:LowerBound>1</lo:LowerBound></a:Attribute>`))
	f.Add(`<!DOCTYPE x>` + doc(""))
	if demo, err := os.ReadFile("../../demo/patient.xml"); err == nil {
		f.Add(string(demo))
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := Parse(strings.NewReader(in), Limits{MaxBytes: 1 << 16, MaxDepth: 16})
		if err != nil {
			var ie *InvalidError
			if !errors.Is(err, ErrTooLarge) && !errors.As(err, &ie) {
				t.Fatalf("error of an unexpected kind: %T %v", err, err)
			}
			return
		}
		if p.ID == "" {
			t.Fatal("parsed a patient without id")
		}
		_, _, attrs := p.Counts()
		vals := p.Values()
		if len(vals) < attrs {
			t.Fatalf("%d values for %d attributes", len(vals), attrs)
		}
		for _, v := range vals {
			if v.MdrKey == "" || strings.TrimSpace(v.MdrKey) != v.MdrKey {
				t.Fatalf("value without a clean MdrKey: %+v", v)
			}
		}
	})
}
