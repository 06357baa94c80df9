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
	`<t:Container id="pc" designation="History">` + attrXML("urn:x:dataelement:6:1", "x") + `</t:Container>` +
	`<Ref><EntityId>c1</EntityId></Ref>` +
	`<c:Case id="c1">` + attrXML("urn:x:dataelement:2:1", " 42 ") +
	`<a:Attribute><k:MdrKey>urn:x:dataelement:3:1</k:MdrKey><lo:LowerBound>1</lo:LowerBound><hi:UpperBound>2</hi:UpperBound></a:Attribute>` +
	`<t:Container designation="Tumour"/><Ref><EntityId>s1</EntityId><EntityId> s2 </EntityId></Ref><Ref/>` +
	`</c:Case><!-- a comment --><c:Case id="c2"/>` +
	`<s:Sample id="s1">` + attrXML("urn:x:dataelement:4:1", "serum") +
	`<t:Container id="box" designation="Box 1"><t:Container designation="Tube">` + attrXML("urn:x:dataelement:5:1", "") +
	`<a:Attribute><k:MdrKey>urn:x:dataelement:7:1</k:MdrKey><v:Value xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:nil="true"/></a:Attribute>` +
	`</t:Container></t:Container>` +
	`</s:Sample><s:Sample id="s2"/>`)

func TestParseFull(t *testing.T) {
	got, err := Parse(strings.NewReader(fullDoc), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := &Patient{
		Entity: Entity{
			ID:         "p1",
			Attributes: []Attribute{{MdrKey: "urn:x:dataelement:1:1", Value: "female", HasValue: true}},
			Containers: []Container{{Entity: Entity{ID: "pc", Attributes: []Attribute{{MdrKey: "urn:x:dataelement:6:1", Value: "x", HasValue: true}}}, Designation: "History"}},
			Refs:       []Ref{{EntityIDs: []string{"c1"}}},
		},
		Cases: []Case{{Entity{
			ID: "c1",
			Attributes: []Attribute{
				{MdrKey: "urn:x:dataelement:2:1", Value: "42", HasValue: true},
				{MdrKey: "urn:x:dataelement:3:1", LowerBound: str("1"), UpperBound: str("2")},
			},
			Containers: []Container{{Designation: "Tumour"}},
			Refs:       []Ref{{EntityIDs: []string{"s1", "s2"}}, {}},
		}}, {Entity{ID: "c2"}}},
		Samples: []Sample{{Entity{
			ID:         "s1",
			Attributes: []Attribute{{MdrKey: "urn:x:dataelement:4:1", Value: "serum", HasValue: true}},
			Containers: []Container{{Entity: Entity{ID: "box", Containers: []Container{{
				Designation: "Tube", Entity: Entity{Attributes: []Attribute{
					{MdrKey: "urn:x:dataelement:5:1", HasValue: true},
					{MdrKey: "urn:x:dataelement:7:1", HasValue: true, Nil: true},
				}},
			}}}, Designation: "Box 1"}},
		}}, {Entity{ID: "s2"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if n, want := got.Counts(), (Counts{Cases: 2, Samples: 2, Containers: 4, Attributes: 7, Refs: 3}); n != want {
		t.Fatalf("Counts = %+v, want %+v", n, want)
	}
	// Nil and empty values are not sent to the registry.
	vals := got.Values()
	wantVals := []Value{
		{`patient "p1"`, "urn:x:dataelement:1:1", "Value", "female"},
		{`container "pc"`, "urn:x:dataelement:6:1", "Value", "x"},
		{`case "c1"`, "urn:x:dataelement:2:1", "Value", "42"},
		{`case "c1"`, "urn:x:dataelement:3:1", "LowerBound", "1"},
		{`case "c1"`, "urn:x:dataelement:3:1", "UpperBound", "2"},
		{`sample "s1"`, "urn:x:dataelement:4:1", "Value", "serum"},
	}
	if !reflect.DeepEqual(vals, wantVals) {
		t.Fatalf("Values = %+v", vals)
	}
}

// jaxbDoc is what the connector's JAXB marshaller writes: a prefix per
// namespace in the order it met them (ns2..ns17 in real uploads), the
// schemaLocation on the root, Ref and EntityId unqualified, nil values,
// containers directly in Patient, Case and Sample, nested ones, and the
// bounds in Value's namespace.
const jaxbDoc = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<ns17:Patient xmlns:ns2="http://schema.samply.de/ccp/Inquiry" xmlns:ns3="http://schema.samply.de/ccp/QueryResult" xmlns:ns9="http://schema.samply.de/ccp/Attribute" xmlns:ns10="http://schema.samply.de/ccp/MdrKey" xmlns:ns11="http://schema.samply.de/ccp/Value" xmlns:ns12="http://schema.samply.de/ccp/Container" xmlns:ns13="http://schema.samply.de/ccp/Entity" xmlns:ns14="http://schema.samply.de/ccp/Case" xmlns:ns15="http://schema.samply.de/ccp/Sample" xmlns:ns17="http://schema.samply.de/ccp/Patient" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://schema.samply.de/ccp/Patient http://schema.samply.de/ccp/Patient.xsd" id="QmFzZTY0SWQ==" dktk_id="DKTK-1" centraxx_id="1001" idType="BK">
    <ns9:Attribute>
        <ns10:MdrKey>urn:dktk:dataelement:1:3</ns10:MdrKey>
        <ns11:Value>W</ns11:Value>
    </ns9:Attribute>
    <ns9:Attribute>
        <ns10:MdrKey>urn:dktk:dataelement:53:3</ns10:MdrKey>
        <ns11:Value xsi:nil="true"/>
    </ns9:Attribute>
    <ns12:Container id="PROGRESS-1" designation="Progress">
        <ns9:Attribute>
            <ns10:MdrKey>urn:dktk:dataelement:25:4</ns10:MdrKey>
            <ns11:Value>01.02.2020</ns11:Value>
        </ns9:Attribute>
        <ns12:Container id="THERAPY-1" designation="SystemTherapy">
            <ns9:Attribute>
                <ns10:MdrKey>urn:dktk:dataelement:38:2</ns10:MdrKey>
                <ns11:Value></ns11:Value>
            </ns9:Attribute>
        </ns12:Container>
        <Ref>
            <EntityId>CASE-1</EntityId>
        </Ref>
    </ns12:Container>
    <ns14:Case id="CASE-1">
        <ns9:Attribute>
            <ns10:MdrKey>urn:dktk:dataelement:29:2</ns10:MdrKey>
            <ns11:Value>C61</ns11:Value>
        </ns9:Attribute>
        <ns12:Container id="TUMOUR-1" designation="Tumour">
            <ns9:Attribute>
                <ns10:MdrKey>urn:dktk:dataelement:7:2</ns10:MdrKey>
                <ns11:Value>8140/3</ns11:Value>
            </ns9:Attribute>
            <ns12:Container id="HISTOLOGY-1" designation="Histology">
                <ns9:Attribute>
                    <ns10:MdrKey>urn:dktk:dataelement:9:2</ns10:MdrKey>
                    <ns11:LowerBound>2</ns11:LowerBound>
                </ns9:Attribute>
            </ns12:Container>
        </ns12:Container>
        <Ref>
            <EntityId>SAMPLE-1</EntityId>
            <EntityId>PROGRESS-1</EntityId>
        </Ref>
    </ns14:Case>
    <ns15:Sample id="SAMPLE-1">
        <ns9:Attribute>
            <ns10:MdrKey>urn:dktk:dataelement:97:1</ns10:MdrKey>
            <ns11:Value>Serum</ns11:Value>
        </ns9:Attribute>
        <ns12:Container id="ALIQUOT-1" designation="Aliquot"/>
        <Ref/>
    </ns15:Sample>
</ns17:Patient>
`

func TestParseJAXB(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"as marshalled", jaxbDoc},
		// A marshaller that makes one namespace the default must undeclare
		// it for the unqualified Ref and EntityId.
		{"default namespace", strings.NewReplacer("ns11:", "", "xmlns:ns11=", "xmlns=", "<Ref>", `<Ref xmlns="">`, "<Ref/>", `<Ref xmlns=""/>`).Replace(jaxbDoc)},
		// Other prefixes, and children in another order than JAXB's.
		{"other prefixes and order", strings.NewReplacer("ns9:", "a:", "xmlns:ns9=", "xmlns:a=", "ns12:", "ns4:", "xmlns:ns12=", "xmlns:ns4=").Replace(
			strings.Replace(jaxbDoc, "<ns14:Case", `<ns15:Sample id="S-0"/><Ref><EntityId>x</EntityId></Ref><ns14:Case`, 1))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(strings.NewReader(tc.in), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if p.ID != "QmFzZTY0SWQ==" || p.DKTKID != "DKTK-1" || p.CentraxxID != "1001" || p.IDType != "BK" {
				t.Fatalf("patient attributes: %+v", p)
			}
			n := p.Counts()
			if n.Cases != 1 || n.Containers != 5 || n.Attributes != 8 || n.Samples < 1 || n.Refs < 3 {
				t.Fatalf("Counts = %+v", n)
			}
			if a := p.Attributes[1]; !a.Nil || !a.HasValue || a.Value != "" {
				t.Fatalf("nil value: %+v", a)
			}
			if r := p.Cases[0].Refs[0].EntityIDs; !reflect.DeepEqual(r, []string{"SAMPLE-1", "PROGRESS-1"}) {
				t.Fatalf("case refs: %q", r)
			}
			// Attributes in containers at any depth are validated; nil and
			// empty values are not.
			var keys []string
			for _, v := range p.Values() {
				keys = append(keys, v.Where+" "+v.MdrKey)
			}
			want := []string{
				`patient "QmFzZTY0SWQ==" urn:dktk:dataelement:1:3`,
				`container "PROGRESS-1" urn:dktk:dataelement:25:4`,
				`case "CASE-1" urn:dktk:dataelement:29:2`,
				`container "TUMOUR-1" urn:dktk:dataelement:7:2`,
				`container "HISTOLOGY-1" urn:dktk:dataelement:9:2`,
				`sample "SAMPLE-1" urn:dktk:dataelement:97:1`,
			}
			if !reflect.DeepEqual(keys, want) {
				t.Fatalf("Values at %q", keys)
			}
		})
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
	if n := p.Counts(); p.ID != "DEMO-0001" || n != (Counts{Cases: 2, Samples: 2, Containers: 7, Attributes: 27, Refs: 4}) {
		t.Fatalf("demo: id %q counts %+v", p.ID, n)
	}
	// Lower-case root in a default namespace; children with their own.
	lower := `<patient xmlns="http://schema.samply.de/ccp/Patient" id="x"><Case xmlns="http://schema.samply.de/ccp/Case" id="c"/></patient>`
	if p, err := Parse(strings.NewReader(lower), Limits{}); err != nil || p.ID != "x" || len(p.Cases) != 1 {
		t.Fatalf("lower-case root: %+v %v", p, err)
	}
	// An undeclared xsi prefix still marks nil; "1" is true in XML Schema.
	for _, v := range []string{`<v:Value xsi:nil="true"/>`, `<v:Value xmlns:i="http://www.w3.org/2001/XMLSchema-instance" i:nil="1"></v:Value>`} {
		p, err := Parse(strings.NewReader(doc(`<a:Attribute><k:MdrKey>urn:a</k:MdrKey>`+v+`</a:Attribute>`)), Limits{})
		if err != nil || !p.Attributes[0].Nil {
			t.Fatalf("%s: %+v %v", v, p, err)
		}
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
	{"sample in case", doc(`<c:Case id="c"><s:Sample id="s"/></c:Case>`), `unexpected element Sample in Case "c": a Sample belongs directly in the Patient`},
	{"case in case", doc(`<c:Case id="c"><c:Case id="d"/></c:Case>`), `unexpected element Case in Case "c"`},
	{"ref in a namespace", doc(`<c:Ref/>`), `element {http://schema.samply.de/ccp/Case}Ref in Patient "p1" must have no namespace`},
	{"entity id in a namespace", doc(`<Ref><v:EntityId>x</v:EntityId></Ref>`), "must have no namespace"},
	{"other element in ref", doc(`<Ref><Id>x</Id></Ref>`), "is not in namespace"},
	{"element in entity id", doc(`<Ref><EntityId><EntityId/></EntityId></Ref>`), "unexpected element EntityId in EntityId"},
	{"text in ref", doc(`<Ref>x</Ref>`), `unexpected text in Ref in Patient "p1"`},
	{"nil value with text", doc(`<a:Attribute><k:MdrKey>urn:a</k:MdrKey><v:Value xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:nil="true">1</v:Value></a:Attribute>`), "marked xsi:nil with text"},
	{"bound in attribute namespace", doc(`<a:Attribute><k:MdrKey>urn:a</k:MdrKey><a:LowerBound>1</a:LowerBound></a:Attribute>`), "is not in namespace"},
	{"attribute without key", doc(`<c:Case id="c1"><a:Attribute><v:Value>1</v:Value></a:Attribute></c:Case>`), `Attribute without MdrKey in Case "c1"`},
	{"attribute with empty key", doc(`<a:Attribute><k:MdrKey> </k:MdrKey><v:Value>1</v:Value></a:Attribute>`), "without MdrKey"},
	{"attribute without value", doc(`<a:Attribute><k:MdrKey>urn:a</k:MdrKey></a:Attribute>`), "Attribute without Value (MdrKey urn:a) in Patient \"p1\""},
	{"empty value element counts", doc(`<a:Attribute><k:MdrKey>urn:a</k:MdrKey><v:Value/><v:Value/></a:Attribute>`), "more than one Value"},
	{"two bounds of a kind", doc(`<a:Attribute><k:MdrKey>urn:a</k:MdrKey><hi:UpperBound>1</hi:UpperBound><hi:UpperBound>2</hi:UpperBound></a:Attribute>`), "more than one UpperBound"},
	{"two keys", doc(`<a:Attribute><k:MdrKey>urn:a</k:MdrKey><k:MdrKey>urn:b</k:MdrKey><v:Value>1</v:Value></a:Attribute>`), "more than one MdrKey"},
	{"text in attribute", doc(`<a:Attribute>x<k:MdrKey>urn:a</k:MdrKey><v:Value>1</v:Value></a:Attribute>`), "unexpected text in Attribute"},
	{"key in wrong namespace", doc(`<a:Attribute><v:MdrKey>urn:a</v:MdrKey><v:Value>1</v:Value></a:Attribute>`), "is not in namespace"},
	{"sample in container", doc(`<t:Container id="t"><s:Sample id="s"/></t:Container>`), `unexpected element Sample in Container "t"`},
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
