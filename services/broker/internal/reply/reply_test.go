package reply

import (
	"errors"
	"testing"
	"unicode/utf8"
)

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int32
		ok   bool
	}{
		{"42", 42, true},
		{" 7\r\n", 7, true},
		{"0", 0, true},
		{"\uFEFF12", 12, true},
		{"-3", 0, false},
		{"+3", 0, false},
		{"3.5", 0, false},
		{"99999999999", 0, false},
		{"", 0, false},
		{"forty", 0, false},
		{`{"count": 17}`, 17, true},
		{`{"count": 1e2}`, 100, true},
		{`{"count": 2.5}`, 0, false},
		{`{"count": -1}`, 0, false},
		{`{"count": "17"}`, 0, false},
		{`{"donor":{"label":"donors","count":5,"stratifications":[]},"sample":{"label":"samples","count":9},"site":"charite"}`, 5, true},
		{`{"sample":{"count":9}}`, 0, false},
		{`{"count": 1} {"count": 2}`, 0, false},
		{`[1,2]`, 0, false},
		{`{"count": 1`, 0, false},
	} {
		got, ok := Count(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Count(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		body []byte
		ct   string
		want string
		err  error
	}{
		{[]byte("Größe 3"), "text/plain", "Größe 3", nil},
		{[]byte("Größe 3"), "text/plain; charset=UTF-8", "Größe 3", nil},
		{[]byte("Gr\xf6\xdfe"), "text/plain; charset=ISO-8859-1", "Größe", nil},
		{[]byte("Gr\xf6\xdfe"), "text/plain; charset=windows-1252", "Größe", nil},
		{[]byte{0xff, 0xfe, '4', 0, '2', 0}, "text/plain; charset=UTF-16", "42", nil},
		{[]byte("ok\xff"), "", "ok\uFFFD", nil},
		{[]byte("x"), "text/plain; charset=klingon", "", ErrCharset},
	} {
		got, err := Decode(tc.body, tc.ct)
		if !errors.Is(err, tc.err) || got != tc.want {
			t.Errorf("Decode(%q, %q) = %q, %v; want %q, %v", tc.body, tc.ct, got, err, tc.want, tc.err)
		}
	}
}

func FuzzReply(f *testing.F) {
	f.Add([]byte("42"), "text/plain")
	f.Add([]byte(`{"donor":{"count":5},"sample":{"count":9}}`), "text/plain; charset=utf-8")
	f.Add([]byte("Gr\xf6\xdfe"), "text/plain; charset=ISO-8859-1")
	f.Add([]byte{0xff, 0xfe, '4', 0}, "text/plain; charset=utf-16")
	f.Add([]byte(replyJSON), "text/plain; charset=ISO-8859-1")
	f.Add([]byte("lots <b>"), "text/plain")
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		text, err := Decode(body, ct)
		if err != nil {
			if !errors.Is(err, ErrCharset) {
				t.Fatalf("Decode error of another kind: %v", err)
			}
			return
		}
		if !utf8.ValidString(text) {
			t.Fatalf("Decode gave invalid UTF-8 %q", text)
		}
		r := Parse(text)
		if n, ok := Count(text); ok && n < 0 || ok != r.Readable() {
			t.Fatalf("negative count %d from %q", n, text)
		}
	})
}

// replyJSON is share-dto's Reply as the connector writes it, with umlauts
// in its labels.
const replyJSON = `{"donor":{"label":"Spender","count":12,"stratifications":[` +
	`{"title":"Geschlecht","strata":[{"label":"männlich","count":5},{"label":"weiblich","count":7}]}]},` +
	`"sample":{"label":"Proben","count":30,"stratifications":[{"title":"Gewebe","strata":[{"label":"Blut","count":30}]}]},` +
	`"redirectUrl":null,"site":"Universität Würzburg"}`

func TestParseReplyLatin1(t *testing.T) {
	body := latin1(t, replyJSON)
	text, err := Decode(body, "text/plain; charset=ISO-8859-1")
	if err != nil {
		t.Fatal(err)
	}
	r := Parse(text)
	if !r.Readable() || *r.Count != 12 {
		t.Fatalf("count = %v", r.Count)
	}
	if r.Donor == nil || r.Donor.Label != "Spender" || r.Donor.Count != 12 {
		t.Fatalf("donor = %+v", r.Donor)
	}
	if r.Sample == nil || r.Sample.Label != "Proben" || r.Sample.Count != 30 {
		t.Fatalf("sample = %+v", r.Sample)
	}
	st := r.Donor.Stratifications
	if len(st) != 1 || st[0].Title != "Geschlecht" || len(st[0].Strata) != 2 ||
		st[0].Strata[0] != (Stratum{"männlich", 5}) || st[0].Strata[1] != (Stratum{"weiblich", 7}) {
		t.Fatalf("stratifications = %+v", st)
	}
	if got := r.Sample.Stratifications; len(got) != 1 || got[0].Strata[0] != (Stratum{"Blut", 30}) {
		t.Fatalf("sample stratifications = %+v", got)
	}
}

// latin1 encodes s (all of it in Latin-1) as ISO-8859-1 bytes.
func latin1(t *testing.T, s string) []byte {
	t.Helper()
	var b []byte
	for _, r := range s {
		if r > 0xff {
			t.Fatalf("%q is not Latin-1", r)
		}
		b = append(b, byte(r))
	}
	return b
}

func TestParseUnreadable(t *testing.T) {
	for _, in := range []string{
		"lots <b>",
		"",
		"  ",
		`{"donor":{"label":"Spender","count":12`,
		`{"donor":{"label":"Spender"}}`,
		`{"donor":{"count":"12"}}`,
		`{"donor":{"count":-1}}`,
		`{"donor":{"count":1.5}}`,
		`{"donor":{"count":3000000000}}`,
		`{"donor":{"label":7,"count":1}}`,
		`{"donor":[]}`,
		`{"donor":null,"sample":{"count":3}}`,
		`{"donor":{"count":1},"sample":{"count":"x"}}`,
		`{"donor":{"count":1,"stratifications":{}}}`,
		`{"donor":{"count":1,"stratifications":[{"title":"a","strata":[{"label":"b","count":-2}]}]}}`,
		`{"donor":{"count":1,"stratifications":[{"title":"a","strata":[{"label":"b"}]}]}}`,
		`{"donor":{"count":1,"stratifications":["x"]}}`,
		`{"count":"5"}`,
	} {
		if r := Parse(in); r.Readable() || r.Donor != nil || r.Sample != nil {
			t.Errorf("Parse(%q) = %+v; want unreadable", in, r)
		}
	}
}

func TestParseDefaults(t *testing.T) {
	// share-dto writes empty lists and null labels; a donor without a
	// sample is a count too.
	r := Parse(`{"donor":{"label":null,"count":0,"stratifications":[]},"sample":null}`)
	if !r.Readable() || *r.Count != 0 || r.Donor == nil || r.Sample != nil {
		t.Fatalf("Parse = %+v", r)
	}
	r = Parse(`{"donor":{"count":4,"stratifications":[{"title":"t","strata":null}]}}`)
	if !r.Readable() || *r.Count != 4 || len(r.Donor.Stratifications) != 1 {
		t.Fatalf("Parse = %+v", r)
	}
	if r := Parse("17"); !r.Readable() || *r.Count != 17 || r.Donor != nil {
		t.Fatalf("Parse(17) = %+v", r)
	}
}
