package registry

import (
	"errors"
	"strings"
	"testing"
)

func TestParseURN(t *testing.T) {
	ok := []struct {
		in   string
		want URN
		str  string // canonical form
	}{
		{"urn:pub:dataelement:1:1", URN{"pub", KindDataElement, 1, 1}, "urn:pub:dataelement:1:1"},
		{"urn:pub:dataelementgroup:12:3", URN{"pub", KindGroup, 12, 3}, "urn:pub:dataelementgroup:12:3"},
		{"urn:pub:record:7:10", URN{"pub", KindRecord, 7, 10}, "urn:pub:record:7:10"},
		{"urn:pub:dataelement:1:latest", URN{"pub", KindDataElement, 1, 0}, "urn:pub:dataelement:1:latest"},
		{"urn:My-NS_1.x:dataelement:5:2", URN{"My-NS_1.x", KindDataElement, 5, 2}, "urn:My-NS_1.x:dataelement:5:2"},
		{"urn:pub:dataelement:007:0010", URN{"pub", KindDataElement, 7, 10}, "urn:pub:dataelement:7:10"},
		{"urn:pub:dataelement:999999999:999999999", URN{"pub", KindDataElement, 999999999, 999999999}, "urn:pub:dataelement:999999999:999999999"},
		{"urn:" + strings.Repeat("n", 64) + ":record:1:1", URN{strings.Repeat("n", 64), KindRecord, 1, 1}, "urn:" + strings.Repeat("n", 64) + ":record:1:1"},
		// Percent-encoded, as URNs arrive in paths and query strings.
		{"urn%3Apub%3Adataelement%3A1%3A2", URN{"pub", KindDataElement, 1, 2}, "urn:pub:dataelement:1:2"},
		{"urn%3apub%3adataelement%3a1%3alatest", URN{"pub", KindDataElement, 1, 0}, "urn:pub:dataelement:1:latest"},
		{"urn:pub:dataelement:1%3A2", URN{"pub", KindDataElement, 1, 2}, "urn:pub:dataelement:1:2"},
		{"%75rn:pub:record:%31:1", URN{"pub", KindRecord, 1, 1}, "urn:pub:record:1:1"},
	}
	for _, c := range ok {
		got, err := ParseURN(c.in)
		if err != nil {
			t.Errorf("ParseURN(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("ParseURN(%q) = %+v, want %+v", c.in, got, c.want)
		}
		if s := got.String(); s != c.str {
			t.Errorf("ParseURN(%q).String() = %q, want %q", c.in, s, c.str)
		}
	}

	bad := []struct{ name, in string }{
		{"empty", ""},
		{"no urn prefix", "pub:dataelement:1:1"},
		{"wrong prefix", "urx:pub:dataelement:1:1"},
		{"upper-case prefix", "URN:pub:dataelement:1:1"},
		{"missing version", "urn:pub:dataelement:1"},
		{"empty version", "urn:pub:dataelement:1:"},
		{"missing id and version", "urn:pub:dataelement"},
		{"too many parts", "urn:pub:dataelement:1:1:1"},
		{"empty namespace", "urn::dataelement:1:1"},
		{"empty kind", "urn:pub::1:1"},
		{"empty id", "urn:pub:dataelement::1"},
		{"bad kind", "urn:pub:element:1:1"},
		{"kind in upper case", "urn:pub:DATAELEMENT:1:1"},
		{"kind plural", "urn:pub:records:1:1"},
		{"zero id", "urn:pub:dataelement:0:1"},
		{"zero version", "urn:pub:dataelement:1:0"},
		{"all-zero id", "urn:pub:dataelement:000:1"},
		{"negative id", "urn:pub:dataelement:-1:1"},
		{"negative version", "urn:pub:dataelement:1:-2"},
		{"plus sign", "urn:pub:dataelement:+1:1"},
		{"non-numeric id", "urn:pub:dataelement:one:1"},
		{"non-numeric version", "urn:pub:dataelement:1:v1"},
		{"hex id", "urn:pub:dataelement:0x1:1"},
		{"decimal version", "urn:pub:dataelement:1:1.0"},
		{"space in id", "urn:pub:dataelement: 1:1"},
		{"non-ASCII digits", "urn:pub:dataelement:١:1"},
		{"LATEST in upper case", "urn:pub:dataelement:1:LATEST"},
		{"latest as id", "urn:pub:dataelement:latest:1"},
		{"overlong id", "urn:pub:dataelement:1234567890:1"},
		{"overlong version", "urn:pub:dataelement:1:1234567890"},
		{"id beyond int64", "urn:pub:dataelement:99999999999999999999999:1"},
		{"overlong namespace", "urn:" + strings.Repeat("n", 65) + ":record:1:1"},
		{"namespace with space", "urn:my ns:record:1:1"},
		{"namespace with slash", "urn:a/b:record:1:1"},
		{"namespace with umlaut", "urn:größe:record:1:1"},
		{"namespace percent-encoded colon", "urn:a%3Ab:record:1:1"},
		{"bad percent-encoding", "urn:pub:dataelement:1:1%"},
		{"bad percent-escape", "urn:pub:dataelement:1:%zz"},
		{"double encoded", "urn%253Apub%253Adataelement%253A1%253A1"},
		{"surrounding spaces", " urn:pub:dataelement:1:1 "},
	}
	for _, c := range bad {
		got, err := ParseURN(c.in)
		if err == nil {
			t.Errorf("%s: ParseURN(%q) = %+v, want an error", c.name, c.in, got)
			continue
		}
		if !errors.Is(err, ErrBadURN) {
			t.Errorf("%s: ParseURN(%q) error %v is not ErrBadURN", c.name, c.in, err)
		}
		if got != (URN{}) {
			t.Errorf("%s: ParseURN(%q) returned %+v with its error", c.name, c.in, got)
		}
	}
}

func TestURNFamilyIgnoresVersion(t *testing.T) {
	a, b := URN{"pub", KindDataElement, 1, 1}, URN{"pub", KindDataElement, 1, 10}
	if a.family() != b.family() {
		t.Errorf("versions of one item have families %q and %q", a.family(), b.family())
	}
	for _, other := range []URN{{"pub", KindGroup, 1, 1}, {"pub", KindDataElement, 11, 1}, {"pu", KindDataElement, 1, 1}, {"pub2", KindDataElement, 1, 1}} {
		if other.family() == a.family() {
			t.Errorf("%v and %v share the family %q", a, other, a.family())
		}
	}
}

func TestMemberType(t *testing.T) {
	for kind, want := range map[string]string{
		KindDataElement: "DATAELEMENT",
		KindGroup:       "DATAELEMENTGROUP",
		KindRecord:      "RECORD",
		"other":         "OTHER",
	} {
		if got := MemberType(kind); got != want {
			t.Errorf("MemberType(%q) = %q, want %q", kind, got, want)
		}
	}
}

func TestValidNamespace(t *testing.T) {
	for _, s := range []string{"a", "pub", "My-NS_1.x", "123", strings.Repeat("x", 64)} {
		if !ValidNamespace(s) {
			t.Errorf("ValidNamespace(%q) = false", s)
		}
	}
	for _, s := range []string{"", "a b", "a:b", "a/b", "a%b", "größe", strings.Repeat("x", 65), "ns\n"} {
		if ValidNamespace(s) {
			t.Errorf("ValidNamespace(%q) = true", s)
		}
	}
}

func FuzzParseURN(f *testing.F) {
	for _, s := range []string{
		"urn:pub:dataelement:1:1",
		"urn:pub:dataelementgroup:12:latest",
		"urn:a.b-c_d:record:0001:0002",
		"urn%3Apub%3Adataelement%3A1%3A2",
		"urn:pub:dataelement:1:1%",
		"urn:pub:dataelement:0:1",
		"urn:pub:dataelement:-1:1",
		"urn:pub:dataelement:999999999:1234567890",
		"urn:a%3Ab:record:1:1",
		"urn::::",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseURN(s)
		if err != nil {
			if !errors.Is(err, ErrBadURN) {
				t.Fatalf("ParseURN(%q) error %v is not ErrBadURN", s, err)
			}
			if u != (URN{}) {
				t.Fatalf("ParseURN(%q) returned %+v with its error", s, u)
			}
			return
		}
		switch u.Kind {
		case KindDataElement, KindGroup, KindRecord:
		default:
			t.Fatalf("ParseURN(%q) accepted the kind of %+v", s, u)
		}
		if !ValidNamespace(u.Namespace) {
			t.Fatalf("ParseURN(%q) accepted the namespace of %+v", s, u)
		}
		if u.Identifier <= 0 || u.Version < 0 {
			t.Fatalf("ParseURN(%q) = %+v: identifier must be positive, version positive or 0 (latest)", s, u)
		}
		str := u.String()
		if strings.Contains(str, "%") {
			t.Fatalf("canonical %q of %q is percent-encoded", str, s)
		}
		again, err := ParseURN(str)
		if err != nil {
			t.Fatalf("ParseURN(%q) = %+v, but its String %q does not parse: %v", s, u, str, err)
		}
		if again != u {
			t.Fatalf("round trip of %q: %+v -> %q -> %+v", s, u, str, again)
		}
		if again.String() != str {
			t.Fatalf("String not stable: %q -> %q", str, again.String())
		}
	})
}
