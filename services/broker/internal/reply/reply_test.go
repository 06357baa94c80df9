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
		if n, ok := Count(text); ok && n < 0 {
			t.Fatalf("negative count %d from %q", n, text)
		}
	})
}
