package samplyquery

import (
	"errors"
	"strings"
	"testing"
)

// A query as the Samply UI writes it: prefixes of its own choosing.
const realQuery = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<ns2:Query xmlns="http://schema.samply.de/common/MdrKey" xmlns:ns2="http://schema.samply.de/common/Query"
    xmlns:ns3="http://schema.samply.de/common/Value" xmlns:ns4="http://schema.samply.de/common/Attribute"
    xmlns:ns5="http://schema.samply.de/common/MultivalueAttribute" xmlns:ns6="http://schema.samply.de/common/RangeAttribute">
  <ns2:Where>
    <ns2:And>
      <ns2:Eq><ns4:Attribute><MdrKey>urn:dktk:dataelement:1:3</MdrKey><ns3:Value>M</ns3:Value></ns4:Attribute></ns2:Eq>
      <ns2:Between><ns6:RangeAttribute><MdrKey>urn:dktk:dataelement:28:1</MdrKey><ns3:LowerBound>18</ns3:LowerBound><ns3:UpperBound>65</ns3:UpperBound></ns6:RangeAttribute></ns2:Between>
      <ns2:Or>
        <ns2:In><ns5:MultivalueAttribute><MdrKey>urn:dktk:dataelement:29:2</MdrKey><ns3:Value>C34.0</ns3:Value><ns3:Value>C34.1</ns3:Value></ns5:MultivalueAttribute></ns2:In>
        <ns2:IsNotNull><MdrKey>urn:dktk:dataelement:2:3</MdrKey></ns2:IsNotNull>
      </ns2:Or>
      <ns2:Like><ns4:Attribute><MdrKey>urn:dktk:dataelement:3:1</MdrKey><ns3:Value>%a&amp;b%</ns3:Value></ns4:Attribute></ns2:Like>
    </ns2:And>
  </ns2:Where>
</ns2:Query>`

func TestParseRealShape(t *testing.T) {
	q, err := Parse([]byte(realQuery))
	if err != nil {
		t.Fatal(err)
	}
	and := q.Where.Children[0]
	if and.Op != "And" || len(and.Children) != 4 {
		t.Fatalf("And = %+v", and)
	}
	eq, between, or, like := and.Children[0], and.Children[1], and.Children[2], and.Children[3]
	if eq.Op != "Eq" || eq.MdrKey != "urn:dktk:dataelement:1:3" || eq.Values[0] != "M" {
		t.Fatalf("Eq = %+v", eq)
	}
	if between.Values[0] != "18" || between.Values[1] != "65" {
		t.Fatalf("Between = %+v", between)
	}
	if in := or.Children[0]; in.Op != "In" || len(in.Values) != 2 || in.Values[1] != "C34.1" {
		t.Fatalf("In = %+v", in)
	}
	if nn := or.Children[1]; nn.Op != "IsNotNull" || nn.MdrKey != "urn:dktk:dataelement:2:3" {
		t.Fatalf("IsNotNull = %+v", nn)
	}
	if like.Values[0] != "%a&b%" {
		t.Fatalf("Like = %+v", like)
	}
	out := Render(q)
	for _, want := range []string{
		`<Query xmlns="http://schema.samply.de/common/Query"`,
		`<Eq><a:Attribute><k:MdrKey>urn:dktk:dataelement:1:3</k:MdrKey><v:Value>M</v:Value></a:Attribute></Eq>`,
		`<r:RangeAttribute><k:MdrKey>urn:dktk:dataelement:28:1</k:MdrKey><v:LowerBound>18</v:LowerBound><v:UpperBound>65</v:UpperBound></r:RangeAttribute>`,
		`<v:Value>%a&amp;b%</v:Value>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rendered query lacks %s:\n%s", want, out)
		}
	}
	again, err := Normalize([]byte(out))
	if err != nil || again != out {
		t.Fatalf("normal form not stable: %v\n%s\n%s", err, out, again)
	}
}

func TestParseAcceptsNoNamespace(t *testing.T) {
	q, err := Parse([]byte(`<Query id="7"><Where><IsNull><MdrKey>urn:a:dataelement:1:1</MdrKey></IsNull><Neq><Attribute><Value>x</Value><MdrKey>urn:a:dataelement:2:latest</MdrKey></Attribute></Neq></Where></Query>`))
	if err != nil {
		t.Fatal(err)
	}
	if q.ID != "7" || len(q.Where.Children) != 2 || q.Where.Children[1].Values[0] != "x" {
		t.Fatalf("%+v", q)
	}
	if _, err := Parse([]byte(`<Query><Where/></Query>`)); err != nil {
		t.Fatalf("empty Where: %v", err)
	}
}

// negations are the conditions of "is not", "none of", "has no value" and
// "has any value" as the Explorer's builder writes them.
const negations = `<Query xmlns="http://schema.samply.de/common/Query" xmlns:a="http://schema.samply.de/common/Attribute" xmlns:m="http://schema.samply.de/common/MultivalueAttribute" xmlns:r="http://schema.samply.de/common/RangeAttribute" xmlns:k="http://schema.samply.de/common/MdrKey" xmlns:v="http://schema.samply.de/common/Value">` +
	`<Where><Or>` +
	`<Neq><a:Attribute><k:MdrKey>urn:mdr16:dataelement:27:1</k:MdrKey><v:Value>C50</v:Value></a:Attribute></Neq>` +
	`<And><Neq><a:Attribute><k:MdrKey>urn:mdr16:dataelement:15:1</k:MdrKey><v:Value>a&lt;b</v:Value></a:Attribute></Neq>` +
	`<Neq><a:Attribute><k:MdrKey>urn:mdr16:dataelement:15:1</k:MdrKey><v:Value>c</v:Value></a:Attribute></Neq></And>` +
	`<IsNull><k:MdrKey>urn:mdr16:dataelement:14:1</k:MdrKey></IsNull>` +
	`<IsNotNull><k:MdrKey>urn:mdr16:dataelement:26:1</k:MdrKey></IsNotNull>` +
	`</Or></Where></Query>`

// TestNegationsRoundTrip: Neq, a list of Neq, IsNull and IsNotNull read
// and written back unchanged, in the share-dto schema's shapes (IsNull and
// IsNotNull hold a MdrKey only, Neq an Attribute).
func TestNegationsRoundTrip(t *testing.T) {
	q, err := Parse([]byte(negations))
	if err != nil {
		t.Fatal(err)
	}
	or := q.Where.Children[0]
	if len(or.Children) != 4 {
		t.Fatalf("%+v", or)
	}
	neq, and, null, notNull := or.Children[0], or.Children[1], or.Children[2], or.Children[3]
	if neq.Op != "Neq" || neq.MdrKey != "urn:mdr16:dataelement:27:1" || len(neq.Values) != 1 || neq.Values[0] != "C50" {
		t.Fatalf("Neq = %+v", neq)
	}
	if and.Op != "And" || len(and.Children) != 2 || and.Children[0].Values[0] != "a<b" || and.Children[1].Op != "Neq" {
		t.Fatalf("And = %+v", and)
	}
	if null.Op != "IsNull" || null.MdrKey != "urn:mdr16:dataelement:14:1" || null.Values != nil {
		t.Fatalf("IsNull = %+v", null)
	}
	if notNull.Op != "IsNotNull" || notNull.MdrKey != "urn:mdr16:dataelement:26:1" || notNull.Values != nil {
		t.Fatalf("IsNotNull = %+v", notNull)
	}
	if out := Render(q); out != negations {
		t.Fatalf("rendered\n%s\nwant\n%s", out, negations)
	}
	// IsNull takes no value; Neq takes one.
	for _, doc := range []string{
		`<Query><Where><IsNull><MdrKey>urn:a:dataelement:1:1</MdrKey><Value>x</Value></IsNull></Where></Query>`,
		`<Query><Where><IsNotNull><Attribute><MdrKey>urn:a:dataelement:1:1</MdrKey></Attribute></IsNotNull></Where></Query>`,
		`<Query><Where><Neq><Attribute><MdrKey>urn:a:dataelement:1:1</MdrKey></Attribute></Neq></Where></Query>`,
		`<Query><Where><Neq><MultivalueAttribute><MdrKey>urn:a:dataelement:1:1</MdrKey><Value>a</Value></MultivalueAttribute></Neq></Where></Query>`,
	} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("accepted %s", doc)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	const k = `<MdrKey>urn:a:dataelement:1:1</MdrKey>`
	for _, tc := range []struct{ name, doc, reason string }{
		{"Empty", "  ", "empty"},
		{"NotXML", "hello", "unexpected text"},
		{"Garbage", "<Query><Where></Query>", "malformed XML"},
		{"Unclosed", "<Query><Where>", "malformed XML"},
		{"WrongRoot", "<Inquiry/>", "expected Query"},
		{"WrongNamespace", `<Query xmlns="http://example.org/q"><Where/></Query>`, "namespace"},
		{"NoWhere", "<Query/>", "no Where"},
		{"TwoWheres", "<Query><Where/><Where/></Query>", "more than one Where"},
		{"UnknownOperator", "<Query><Where><Contains>" + k + "</Contains></Where></Query>", "unknown operator Contains"},
		{"MissingMdrKey", "<Query><Where><Eq><Attribute><Value>1</Value></Attribute></Eq></Where></Query>", "no MdrKey"},
		{"EmptyMdrKey", "<Query><Where><IsNull><MdrKey> </MdrKey></IsNull></Where></Query>", "MdrKey is empty"},
		{"BadMdrKey", "<Query><Where><IsNull><MdrKey>age</MdrKey></IsNull></Where></Query>", "not a data element URN"},
		{"MissingValue", "<Query><Where><Eq><Attribute>" + k + "</Attribute></Eq></Where></Query>", "no Value"},
		{"TwoValues", "<Query><Where><Eq><Attribute>" + k + "<Value>1</Value><Value>2</Value></Attribute></Eq></Where></Query>", "more than one Value"},
		{"NoAttribute", "<Query><Where><Eq/></Where></Query>", "no Attribute"},
		{"WrongWrapper", "<Query><Where><In><Attribute>" + k + "<Value>1</Value></Attribute></In></Where></Query>", "expected MultivalueAttribute"},
		{"BetweenNoUpper", "<Query><Where><Between><RangeAttribute>" + k + "<LowerBound>1</LowerBound></RangeAttribute></Between></Where></Query>", "LowerBound and UpperBound"},
		{"ValueInBetween", "<Query><Where><Between><RangeAttribute>" + k + "<Value>1</Value></RangeAttribute></Between></Where></Query>", "unexpected Value"},
		{"InNoValue", "<Query><Where><In><MultivalueAttribute>" + k + "</MultivalueAttribute></In></Where></Query>", "no Value"},
		{"TextInGroup", "<Query><Where>age > 3</Where></Query>", "unexpected text"},
		{"ChildInValue", "<Query><Where><Eq><Attribute>" + k + "<Value><b/></Value></Attribute></Eq></Where></Query>", "unexpected element b"},
		{"Doctype", `<!DOCTYPE q [<!ENTITY x "y">]><Query><Where/></Query>`, "DOCTYPE"},
		{"Trailing", "<Query><Where/></Query><Query/>", "after the Query"},
		{"OrderBy", "<Query><Where/><OrderBy/></Query>", "not supported"},
		{"Deep", "<Query><Where>" + strings.Repeat("<And>", 70) + strings.Repeat("</And>", 70) + "</Where></Query>", "nested deeper"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			var qe *Error
			if err == nil || !errors.As(err, &qe) {
				t.Fatalf("Parse = %v, want a query error", err)
			}
			if !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("reason %q does not mention %q", err, tc.reason)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(realQuery))
	f.Add([]byte(`<Query><Where><IsNull><MdrKey>urn:a:dataelement:1:1</MdrKey></IsNull></Where></Query>`))
	f.Add([]byte(`<Query><Where><Or><Between><RangeAttribute><MdrKey>urn:a:dataelement:1:1</MdrKey><LowerBound>a</LowerBound><UpperBound>&lt;</UpperBound></RangeAttribute></Between></Or></Where></Query>`))
	f.Add([]byte(`<Query id="x&amp;y"><Where/></Query>`))
	f.Add([]byte(negations))
	f.Add([]byte(`<Query><Where><Neq><Attribute><MdrKey>urn:a:dataelement:1:1</MdrKey><Value>&lt;&amp;&gt;</Value></Attribute></Neq><IsNotNull><MdrKey>urn:a:dataelement:2:1</MdrKey></IsNotNull></Where></Query>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		q, err := Parse(doc)
		if err != nil {
			var qe *Error
			if !errors.As(err, &qe) {
				t.Fatalf("error of another type: %v", err)
			}
			return
		}
		out := Render(q)
		again, err := Normalize([]byte(out))
		if err != nil {
			t.Fatalf("rendered query does not parse: %v\n%s", err, out)
		}
		if again != out {
			t.Fatalf("normal form not stable:\n%s\n%s", out, again)
		}
	})
}
