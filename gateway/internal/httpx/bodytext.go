package httpx

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"
)

// ErrNotUTF8 is a request body's read error when the body is a form or
// JSON whose text is not valid UTF-8 (CheckBodyText): every handler
// answers it with 400, as it answers a form it cannot read.
var ErrNotUTF8 = errors.New("the request body holds text that is not valid UTF-8")

// CheckBodyText checks, as they are read, the bodies whose fields the
// gateway passes on to a service as proto strings: HTML forms
// (application/x-www-form-urlencoded, each name and value once
// percent-decoded) and JSON (application/json, any +json type, or no
// Content-Type, which the JSON routes read as JSON). A proto string must be
// UTF-8: without this the gRPC client fails to marshal the request and the
// client sees a 500 for its own mistake. A body that is not fails its read
// with ErrNotUTF8, which the handler answers with 400 in the format of its
// path (a page, a JSON error), before it calls any service: the check is
// here once, not in each handler, and costs no copy of the body. skip
// names the paths left alone (the XML and text groups, whose handlers read
// bodies of their own formats). Multipart forms are checked where the one
// that exists is read (the Explorer's inquiry form, with ValidText): their
// files are bytes, not text.
func CheckBodyText(skip func(path string) bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || skip(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		form, ok := textBody(r.Header.Get("Content-Type"))
		if ok {
			r.Body = &checkedBody{ReadCloser: r.Body, c: textCheck{form: form}}
		}
		next.ServeHTTP(w, r)
	})
}

// textBody reports whether a body of Content-Type ct is text to check, and
// whether it is a form (else JSON).
func textBody(ct string) (form, ok bool) {
	if strings.TrimSpace(ct) == "" {
		return false, true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false, false
	}
	switch {
	case mt == "application/x-www-form-urlencoded":
		return true, true
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return false, true
	}
	return false, false
}

// ValidText reports whether s may go into a proto string: for the fields
// read outside CheckBodyText (a multipart form's).
func ValidText(s string) bool { return utf8.ValidString(s) }

// checkedBody passes its body through unchanged and fails the read that
// reveals text that is not UTF-8.
type checkedBody struct {
	io.ReadCloser
	c   textCheck
	err error
}

func (b *checkedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.ReadCloser.Read(p)
	if !b.c.write(p[:n]) || (err == io.EOF && !b.c.end()) {
		b.err = ErrNotUTF8
		return 0, b.err
	}
	return n, err
}

// textCheck validates a text as it arrives in pieces: UTF-8 (JSON's bytes
// as they are), or a form's names and values once percent-decoded. The
// decoded form is checked as one text: the separators '&' and '=' are
// ASCII, which no multi-byte sequence may hold, so the whole is valid
// exactly when each name and value is. A malformed escape is checked as
// its bytes: such a form is refused by every reader anyway.
type textCheck struct {
	form bool
	esc  int  // form: 1 after '%', 2 after '%' and one hex digit
	hi   byte // the escape's first digit
	pend [utf8.UTFMax]byte
	np   int // bytes of an incomplete rune at the end of what came
	// buf holds a form's piece decoded, a part at a time: no allocation
	// grows with the body.
	buf [256]byte
}

// write checks the next piece; false: the text is not UTF-8.
func (c *textCheck) write(p []byte) bool {
	if !c.form || c.esc == 0 && bytes.IndexByte(p, '%') < 0 {
		return c.utf8(p)
	}
	out := c.buf[:0]
	for _, b := range p {
		if len(out) > len(c.buf)-3 {
			if !c.utf8(out) {
				return false
			}
			out = c.buf[:0]
		}
		switch c.esc {
		case 0:
			if b == '%' {
				c.esc = 1
				continue
			}
			out = append(out, b)
		case 1:
			if h, ok := unhex(b); ok {
				c.hi, c.esc = h, 2
				continue
			}
			out = append(out, '%', b)
			c.esc = 0
		case 2:
			if h, ok := unhex(b); ok {
				out = append(out, c.hi<<4|h)
			} else {
				out = append(out, '%', hexDigit(c.hi), b)
			}
			c.esc = 0
		}
	}
	return c.utf8(out)
}

// end says whether the text ended on a whole rune.
func (c *textCheck) end() bool { return c.np == 0 }

// utf8 checks the next piece of raw text, carrying an incomplete rune at
// its end over to the next.
func (c *textCheck) utf8(p []byte) bool {
	for c.np > 0 && len(p) > 0 {
		c.pend[c.np] = p[0]
		c.np++
		p = p[1:]
		if utf8.FullRune(c.pend[:c.np]) {
			if r, n := utf8.DecodeRune(c.pend[:c.np]); r == utf8.RuneError && n <= 1 {
				return false
			}
			c.np = 0
		}
	}
	if len(p) == 0 {
		return true
	}
	cut := len(p)
	for i := len(p) - 1; i >= 0 && i > len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				cut = i
			}
			break
		}
	}
	if !utf8.Valid(p[:cut]) {
		return false
	}
	c.np = copy(c.pend[:], p[cut:])
	return true
}

func unhex(b byte) (byte, bool) {
	switch {
	case '0' <= b && b <= '9':
		return b - '0', true
	case 'a' <= b && b <= 'f':
		return b - 'a' + 10, true
	case 'A' <= b && b <= 'F':
		return b - 'A' + 10, true
	}
	return 0, false
}

func hexDigit(h byte) byte { return "0123456789ABCDEF"[h&0xf] }
