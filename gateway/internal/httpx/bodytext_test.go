package httpx

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkPieces runs a textCheck over body cut into pieces of the sizes in
// cuts (cycled; 0 counts as 1).
func checkPieces(form bool, body []byte, cuts []byte) bool {
	c := textCheck{form: form}
	for i := 0; len(body) > 0; i++ {
		n := 1
		if len(cuts) > 0 {
			n = max(1, int(cuts[i%len(cuts)]))
		}
		n = min(n, len(body))
		if !c.write(body[:n]) {
			return false
		}
		body = body[n:]
	}
	return c.end()
}

// formValid is the reference: every name and value of a form that parses
// is UTF-8 (a form that does not parse is refused by every reader).
func formValid(body string) (valid, parses bool) {
	vals, err := url.ParseQuery(body)
	if err != nil {
		return false, false
	}
	for k, vs := range vals {
		if !utf8.ValidString(k) {
			return false, true
		}
		for _, v := range vs {
			if !utf8.ValidString(v) {
				return false, true
			}
		}
	}
	return true, true
}

func TestTextCheck(t *testing.T) {
	cases := []struct {
		form bool
		body string
		want bool
	}{
		{true, "email=ada%40lab.example&password=x", true},
		{true, "email=%ff", false},
		{true, "email=\xff", false},
		{true, "%ff=x", false},
		{true, "name=J%C3%BCrgen+M%C3%BCller", true},
		{true, "name=J%C3&x=%BC", false}, // a sequence cut by '&' is two bad values
		{true, "name=%e2%80%8b", true},   // zero width space: valid UTF-8
		{true, "name=%ED%A0%80", false},  // a surrogate
		{true, "name=%C0%AF", false},     // overlong
		{true, "name=%F0%9F%98%80", true},
		{true, "name=%F0%9F%98", false}, // cut at the end
		{true, "a=100%", true},          // malformed, not ours to refuse
		{false, `{"email":"ada@lab.example","name":"Jürgen 😀"}`, true},
		{false, "{\"email\":\"\xff\"}", false},
		{false, "{\"name\":\"\xf0\x9f\x98\"}", false},
	}
	// Long forms: the decoded text is checked a part at a time, a rune
	// split between two parts at every offset.
	for k := range 5 {
		long := "name=" + strings.Repeat("a", k) + strings.Repeat("%F0%9F%98%80", 150)
		cases = append(cases, struct {
			form bool
			body string
			want bool
		}{true, long, true}, struct {
			form bool
			body string
			want bool
		}{true, long + "%ff", false}, struct {
			form bool
			body string
			want bool
		}{true, long[:len(long)-3], false})
	}
	for _, tc := range cases {
		for _, cuts := range [][]byte{nil, {1}, {2}, {3}, {5}, {1, 7}, {255}, {200, 255, 255, 255}} {
			if got := checkPieces(tc.form, []byte(tc.body), cuts); got != tc.want {
				t.Errorf("%q in pieces %v: %v, want %v", tc.body, cuts, got, tc.want)
			}
		}
	}
}

// FuzzTextCheck: the streamed check, in pieces of any size, says of a form
// what url.ParseQuery's names and values say, and of JSON what
// utf8.Valid says.
func FuzzTextCheck(f *testing.F) {
	for _, s := range []string{"email=%ff", "a=b&c=%C3%A9", "x=%F0%9F%98%80", "%", "a=%e2%80", "k=\xc3\xa9;x",
		"n=" + strings.Repeat("%E2%80%8B", 100), "n=a" + strings.Repeat("%E2%80%8B", 100) + "%E2"} {
		f.Add([]byte(s), []byte{1, 3})
		f.Add([]byte(s), []byte{255})
	}
	f.Fuzz(func(t *testing.T, body, cuts []byte) {
		if want, parses := formValid(string(body)); parses {
			if got := checkPieces(true, body, cuts); got != want {
				t.Fatalf("form %q in pieces %v: %v, want %v", body, cuts, got, want)
			}
		}
		if got, want := checkPieces(false, body, cuts), utf8.Valid(body); got != want {
			t.Fatalf("JSON %q in pieces %v: %v, want %v", body, cuts, got, want)
		}
	})
}

func TestCheckBodyText(t *testing.T) {
	var got error
	var read string
	h := CheckBodyText(func(p string) bool { return strings.HasPrefix(p, "/xml") }, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		got, read = err, string(b)
	}))
	for _, tc := range []struct {
		path, ct, body string
		want           error
	}{
		{"/oauth2/authorize", "application/x-www-form-urlencoded", "email=%ff", ErrNotUTF8},
		{"/oauth2/authorize", "application/x-www-form-urlencoded; charset=iso-8859-1", "email=%ff", ErrNotUTF8},
		{"/oauth2/authorize", "application/x-www-form-urlencoded", "email=%c3%a9", nil},
		{"/oauth2/register", "application/json", "{\"email\":\"\xff\"}", ErrNotUTF8},
		{"/oauth2/register", "", "{\"email\":\"\xff\"}", ErrNotUTF8},
		{"/oauth2/register", "application/merge-patch+json", "\"\xff\"", ErrNotUTF8},
		{"/explorer/inquiries", "multipart/form-data; boundary=x", "\xff", nil},
		{"/xml/upload", "application/json", "\xff", nil},
		{"/x", "application/octet-stream", "\xff", nil},
	} {
		r := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body))
		if tc.ct != "" {
			r.Header.Set("Content-Type", tc.ct)
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		if !errors.Is(got, tc.want) {
			t.Errorf("%s %q %q: %v, want %v", tc.path, tc.ct, tc.body, got, tc.want)
		}
		if tc.want == nil && read != tc.body {
			t.Errorf("%s %q: the handler read %q, not the body", tc.path, tc.ct, read)
		}
	}
}
