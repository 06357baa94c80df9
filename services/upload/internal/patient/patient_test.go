package patient

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

const ns = `xmlns:p="http://schema.samply.de/ccp/Patient" xmlns:c="http://schema.samply.de/ccp/Case" xmlns:a="http://schema.samply.de/ccp/Attribute" xmlns:k="http://schema.samply.de/ccp/MdrKey" xmlns:v="http://schema.samply.de/ccp/Value" xmlns:s="http://schema.samply.de/ccp/Sample" xmlns:t="http://schema.samply.de/ccp/Container" xmlns:lo="http://schema.samply.de/ccp/LowerBound" xmlns:hi="http://schema.samply.de/ccp/UpperBound"`

func doc(body string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><p:Patient ` + ns + ` id="p1">` + body + `</p:Patient>`
}

func attrXML(key, val string) string {
	return `<a:Attribute><k:MdrKey>` + key + `</k:MdrKey><v:Value>` + val + `</v:Value></a:Attribute>`
}

func str(s string) *string { return &s }

// fullDoc has every kind of element; the fuzz target starts from it too.
var fullDoc = doc(attrXML("urn:x:dataelement:1:1", "female") +
	`<c:Case id="c1">` + attrXML("urn:x:dataelement:2:1", " 42 ") +
	`<a:Attribute><k:MdrKey>urn:x:dataelement:3:1</k:MdrKey><lo:LowerBound>1</lo:LowerBound><hi:UpperBound>2</hi:UpperBound></a:Attribute>` +
	`<s:Sample id="s1">` + attrXML("urn:x:dataelement:4:1", "serum") +
	`<t:Container id="box" designation="Box 1"><t:Container designation="Tube">` + attrXML("urn:x:dataelement:5:1", "") + `</t:Container></t:Container>` +
	`</s:Sample></c:Case><!-- a comment --><c:Case id="c2"/>` +
	`<s:Sample id="s2"/>`)

func TestParseFull(t *testing.T) {
	got, err := Parse(strings.NewReader(fullDoc), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := &Patient{
		ID:         "p1",
		Attributes: []Attribute{{MdrKey: "urn:x:dataelement:1:1", Value: "female", HasValue: true}},
		Cases: []Case{{
			ID: "c1",
			Attributes: []Attribute{
				{MdrKey: "urn:x:dataelement:2:1", Value: "42", HasValue: true},
				{MdrKey: "urn:x:dataelement:3:1", LowerBound: str("1"), UpperBound: str("2")},
			},
			Samples: []Sample{{
				ID:         "s1",
				Attributes: []Attribute{{MdrKey: "urn:x:dataelement:4:1", Value: "serum", HasValue: true}},
				Containers: []Container{{ID: "box", Designation: "Box 1", Containers: []Container{{
					Designation: "Tube", Attributes: []Attribute{{MdrKey: "urn:x:dataelement:5:1", HasValue: true}},
				}}}},
			}},
		}, {ID: "c2"}},
		Samples: []Sample{{ID: "s2"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if c, s, a := got.Counts(); c != 2 || s != 2 || a != 5 {
		t.Fatalf("Counts = %d %d %d", c, s, a)
	}
	vals := got.Values()
	wantVals := []Value{
		{`patient "p1"`, "urn:x:dataelement:1:1", "Value", "female"},
		{`case "c1"`, "urn:x:dataelement:2:1", "Value", "42"},
		{`case "c1"`, "urn:x:dataelement:3:1", "LowerBound", "1"},
		{`case "c1"`, "urn:x:dataelement:3:1", "UpperBound", "2"},
		{`sample "s1"`, "urn:x:dataelement:4:1", "Value", "serum"},
		{`container "Tube"`, "urn:x:dataelement:5:1", "Value", ""},
	}
	if !reflect.DeepEqual(vals, wantVals) {
		t.Fatalf("Values = %+v", vals)
	}
}

func TestParseDemoAndSpellings(t *testing.T) {
	demo, err := os.ReadFile("../../demo/patient.xml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(bytes.NewReader(demo), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if c, s, a := p.Counts(); p.ID != "DEMO-0001" || c != 2 || s != 2 || a != 25 {
		t.Fatalf("demo: id %q counts %d %d %d", p.ID, c, s, a)
	}
	// Lower-case root in a default namespace; children with their own.
	lower := `<patient xmlns="http://schema.samply.de/ccp/Patient" id="x"><Case xmlns="http://schema.samply.de/ccp/Case" id="c"/></patient>`
	if p, err := Parse(strings.NewReader(lower), Limits{}); err != nil || p.ID != "x" || len(p.Cases) != 1 {
		t.Fatalf("lower-case root: %+v %v", p, err)
	}
}

// errorCases are refused documents and the reason each must give; the fuzz
// target starts from them too.
var errorCases = []struct{ name, in, reason string }{
	{"malformed", doc(`<c:Case id="c1">`), "malformed XML"},
	{"empty", ``, "no root element"},
	{"wrong root", `<Patients xmlns="http://schema.samply.de/ccp/Patient" id="x"/>`, "root element must be Patient"},
	{"wrong root namespace", `<Patient xmlns="http://schema.samply.de/ccp/Case" id="x"/>`, "root element must be Patient"},
	{"no namespace", `<Patient id="x"/>`, "root element must be Patient"},
	{"no id", `<Patient xmlns="http://schema.samply.de/ccp/Patient"/>`, "Patient without id"},
	{"case without id", doc(`<c:Case/>`), "Case without id"},
	{"sample without id", doc(`<s:Sample/>`), "Sample without id"},
	{"child in wrong namespace", doc(`<v:Case id="c"/>`), "is not in namespace"},
	{"unknown element", doc(`<Foo xmlns="http://schema.samply.de/ccp/Foo"/>`), "unexpected element Foo"},
	{"sample in container order", doc(`<c:Case id="c"><t:Container/></c:Case>`), `unexpected element Container in Case "c"`},
	{"attribute without key", doc(`<c:Case id="c1"><a:Attribute><v:Value>1</v:Value></a:Attribute></c:Case>`), `Attribute without MdrKey in Case "c1"`},
	{"attribute with empty key", doc(`<a:Attribute><k:MdrKey> </k:MdrKey><v:Value>1</v:Value></a:Attribute>`), "without MdrKey"},
	{"attribute without value", doc(`<a:Attribute><k:MdrKey>urn:a</k:MdrKey></a:Attribute>`), "Attribute without Value (MdrKey urn:a) in Patient \"p1\""},
	{"empty value element counts", doc(`<a:Attribute><k:MdrKey>urn:a</k:MdrKey><v:Value/><v:Value/></a:Attribute>`), "more than one Value"},
	{"two bounds of a kind", doc(`<a:Attribute><k:MdrKey>urn:a</k:MdrKey><hi:UpperBound>1</hi:UpperBound><hi:UpperBound>2</hi:UpperBound></a:Attribute>`), "more than one UpperBound"},
	{"two keys", doc(`<a:Attribute><k:MdrKey>urn:a</k:MdrKey><k:MdrKey>urn:b</k:MdrKey><v:Value>1</v:Value></a:Attribute>`), "more than one MdrKey"},
	{"text in attribute", doc(`<a:Attribute>x<k:MdrKey>urn:a</k:MdrKey><v:Value>1</v:Value></a:Attribute>`), "unexpected text in Attribute"},
	{"key in wrong namespace", doc(`<a:Attribute><v:MdrKey>urn:a</v:MdrKey><v:Value>1</v:Value></a:Attribute>`), "is not in namespace"},
	{"container in patient", doc(`<t:Container/>`), `unexpected element Container in Patient "p1"`},
	{"case in sample", doc(`<s:Sample id="s"><c:Case id="c"/></s:Sample>`), `unexpected element Case in Sample "s"`},
	{"entity", doc(`<c:Case id="&x;"/>`), "malformed XML"},
	{"text before root", `x` + doc(``), "text before the root element"},
	{"two values", doc(`<a:Attribute><k:MdrKey>urn:a</k:MdrKey><v:Value>1</v:Value><v:Value>2</v:Value></a:Attribute>`), "more than one Value"},
	{"value and bound", doc(`<a:Attribute><k:MdrKey>urn:a</k:MdrKey><v:Value>1</v:Value><lo:LowerBound>2</lo:LowerBound></a:Attribute>`), "both a Value and bounds"},
	{"element in value", doc(`<a:Attribute><k:MdrKey>urn:a</k:MdrKey><v:Value><b/></v:Value></a:Attribute>`), "unexpected element b"},
	{"text in case", doc(`<c:Case id="c">hello</c:Case>`), "unexpected text"},
	{"doctype", `<!DOCTYPE p [<!ENTITY x "y">]>` + doc(``), "DOCTYPE"},
	{"trailing element", doc(``) + `<x/>`, "content after the root element"},
	{"trailing text", doc(``) + `junk`, "content after the root element"},
	{"depth", doc(`<s:Sample id="s">` + strings.Repeat(`<t:Container>`, 40) + strings.Repeat(`</t:Container>`, 40) + `</s:Sample>`), "nesting deeper than 32"},
	{"long names clipped", doc(`<c:Case id="` + strings.Repeat("c", 500) + `"><Foo` + strings.Repeat("o", 500) + ` xmlns="http://schema.samply.de/ccp/Foo` + strings.Repeat("o", 500) + `"/></c:Case>`), "unexpected element Foo"},
	{"newline in namespace", doc(`<c:Case id="c"><x:Sample xmlns:x="urn:a` + "\n" + `b" id="s"/></c:Case>`), "is not in namespace"},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.in), Limits{})
			var ie *InvalidError
			if !errors.As(err, &ie) || !strings.Contains(ie.Reason, tc.reason) {
				t.Fatalf("err = %v, want InvalidError containing %q", err, tc.reason)
			}
			if !oneShortLine(ie.Reason) {
				t.Fatalf("reason is not one short line: %q", ie.Reason)
			}
		})
	}
}

func oneShortLine(s string) bool {
	return len(s) <= maxReason && !strings.ContainsAny(s, "\r\n")
}

// endless serves a patient whose attributes never end, and fails any read
// beyond its budget: Parse may read the limit plus one byte to tell an
// over-long document from one of exactly the limit, and not a byte more.
type endless struct {
	n, budget int64
	overread  bool
}

var errOverread = errors.New("read past the limit")

func (e *endless) Read(b []byte) (int, error) {
	if e.n >= e.budget {
		e.overread = true
		return 0, errOverread
	}
	head := doc("")[:len(doc(""))-len("</p:Patient>")]
	body := attrXML("urn:a", "1")
	b = b[:min(int64(len(b)), e.budget-e.n)]
	for i := range b {
		if e.n < int64(len(head)) {
			b[i] = head[e.n]
		} else {
			b[i] = body[(e.n-int64(len(head)))%int64(len(body))]
		}
		e.n++
	}
	return len(b), nil
}

func TestParseStreams(t *testing.T) {
	for _, max := range []int64{1, 100, 4096, 64 << 10, 1<<20 + 7} {
		src := &endless{budget: max + 1}
		_, err := Parse(src, Limits{MaxBytes: max})
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("limit %d: err = %v, want ErrTooLarge", max, err)
		}
		if src.overread {
			t.Errorf("limit %d: Parse read past limit+1 bytes", max)
		}
	}
}

func TestParseLimits(t *testing.T) {
	in := doc(attrXML("urn:a", strings.Repeat("x", 1000)))
	if _, err := Parse(strings.NewReader(in), Limits{MaxBytes: int64(len(in))}); err != nil {
		t.Fatalf("a document of exactly the limit: %v", err)
	}
	if _, err := Parse(strings.NewReader(in), Limits{MaxBytes: int64(len(in) - 1)}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("one byte over: %v", err)
	}
	nested := func(containers int) string {
		return doc(`<s:Sample id="s">` + strings.Repeat(`<t:Container>`, containers) + strings.Repeat(`</t:Container>`, containers) + `</s:Sample>`)
	}
	if _, err := Parse(strings.NewReader(nested(6)), Limits{MaxDepth: 6}); err == nil {
		t.Fatal("depth 8 passed a limit of 6")
	}
	// Patient, Sample and 30 Containers are the default's 32 levels.
	if _, err := Parse(strings.NewReader(nested(30)), Limits{}); err != nil {
		t.Fatalf("depth 32: %v", err)
	}
	var ie *InvalidError
	if _, err := Parse(strings.NewReader(nested(31)), Limits{}); !errors.As(err, &ie) || ie.Reason != "nesting deeper than 32 elements" {
		t.Fatalf("depth 33: %v", err)
	}
}
