// Package stats reads and writes the upload statistics document, both
// directions in one place: a site's connector PUTs it, root Uploadstats (or
// UploadStats) with one LastUploadTimestamp holding an HTTP-date, in UTF-8,
// US-ASCII or ISO-8859-1 (the connector's HTTP client labels its string
// body text/plain; charset=ISO-8859-1), and GETs it back to learn which
// patients changed since. Time zone abbreviations are mapped to offsets
// from an explicit table, because time.Parse silently reads an abbreviation
// it does not know as UTC, which would shift a CET timestamp by an hour; a
// timestamp that cannot be read is refused, never replaced.
package stats

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/encoding/charmap"

	"fris.dev/services/upload/internal/contenttype"
)

// MaxBytes bounds the document; a real one is about 150 bytes.
const MaxBytes = 64 << 10

// InvalidError is a document the service cannot read; Reason is for the client.
type InvalidError struct{ Reason string }

func (e *InvalidError) Error() string { return e.Reason }

func invalid(format string, a ...any) error { return &InvalidError{Reason: fmt.Sprintf(format, a...)} }

// decoder reads a charset as UTF-8; nil for UTF-8 itself (and US-ASCII, a
// subset), which is read as is.
func decoder(cs contenttype.Charset) func(io.Reader) io.Reader {
	if cs == contenttype.Latin1 {
		return func(r io.Reader) io.Reader { return charmap.ISO8859_1.NewDecoder().Reader(r) }
	}
	return nil
}

// Parse reads a document in cs, the Content-Type's charset (the XML
// declaration's encoding when unnamed). ok is false (with a nil error) when
// the document is empty or well-formed with the right root but holds no
// parseable timestamp. An error not from reading r is an *InvalidError.
func Parse(r io.Reader, cs contenttype.Charset) (t time.Time, ok bool, err error) {
	// One byte beyond the limit tells an over-long document from one of
	// exactly the limit.
	lr := &io.LimitedReader{R: r, N: MaxBytes + 1}
	tooLarge := invalid("the document is larger than %d bytes", MaxBytes)
	br := bufio.NewReader(lr)
	// An empty body is the connector saying "now", as a document without
	// a timestamp does.
	empty, err := blank(br)
	switch {
	case lr.N <= 0:
		return time.Time{}, false, tooLarge
	case err != nil:
		return time.Time{}, false, err
	case empty:
		return time.Time{}, false, nil
	}
	var src io.Reader = br
	if decode := decoder(cs); decode != nil {
		src = decode(src)
	}
	d := xml.NewDecoder(src)
	d.CharsetReader = func(declared string, in io.Reader) (io.Reader, error) {
		if cs != contenttype.Unnamed {
			// The Content-Type's charset wins over the declaration, and the
			// body is already UTF-8 by now.
			return in, nil
		}
		dcs, ok := contenttype.LookupCharset(declared)
		if !ok {
			return nil, fmt.Errorf("encoding %q is not supported: send UTF-8 or ISO-8859-1", clip(declared, 40))
		}
		if decode := decoder(dcs); decode != nil {
			return decode(in), nil
		}
		return in, nil
	}
	var text strings.Builder
	depth, inStamp, sawRoot, sawStamp := 0, false, false, false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if lr.N <= 0 {
				return time.Time{}, false, tooLarge
			}
			return time.Time{}, false, invalid("malformed XML: %s", clip(err.Error(), 160))
		}
		switch tk := tok.(type) {
		case xml.Directive:
			return time.Time{}, false, invalid("DOCTYPE and other directives are not allowed")
		case xml.StartElement:
			depth++
			switch {
			case depth == 1:
				if sawRoot {
					return time.Time{}, false, invalid("more than one root element")
				}
				if tk.Name.Local != "Uploadstats" && tk.Name.Local != "UploadStats" {
					return time.Time{}, false, invalid("root element must be Uploadstats, got %s", clip(tk.Name.Local, 60))
				}
				sawRoot = true
			case depth == 2 && tk.Name.Local == "LastUploadTimestamp" && !sawStamp:
				inStamp, sawStamp = true, true
			case depth > 8:
				return time.Time{}, false, invalid("nesting deeper than 8 elements")
			}
		case xml.EndElement:
			depth--
			if depth == 1 {
				inStamp = false
			}
		case xml.CharData:
			if inStamp && depth == 2 {
				text.Write(tk)
			}
		}
	}
	if lr.N <= 0 {
		return time.Time{}, false, tooLarge
	}
	if !sawRoot {
		return time.Time{}, false, invalid("the document has no root element")
	}
	stamp := strings.TrimSpace(text.String())
	if stamp == "" {
		return time.Time{}, false, nil
	}
	t, ok = ParseTime(stamp)
	if !ok {
		// Storing the server's clock instead would start the next
		// incremental upload late and lose the changes in between.
		return time.Time{}, false, invalid("LastUploadTimestamp %q is not a time with a known zone (e.g. Mon, 23 Nov 2026 16:19:46 CET, or GMT+01:00 as the zone)", clip(stamp, 40))
	}
	return t, true, nil
}

// ContentType is the media type of the documents Render writes.
const ContentType = "application/xml; charset=utf-8"

// neverUploaded is what Render writes for a teiler without a timestamp:
// the epoch, before any patient changed, so the connector sends them all.
var neverUploaded = time.Unix(0, 0)

// document is what Render writes; Parse reads it back (and more).
type document struct {
	XMLName   xml.Name `xml:"Uploadstats"`
	Timestamp string   `xml:"LastUploadTimestamp"`
}

// Render writes the document GET answers for a teiler whose last upload was
// at (zero: never), its timestamp an HTTP-date in GMT to the second.
func Render(at time.Time) ([]byte, error) {
	if at.IsZero() {
		at = neverUploaded
	}
	var b bytes.Buffer
	// encoding/xml writes no standalone declaration; connectors were served
	// this one from the start.
	b.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n")
	if err := xml.NewEncoder(&b).Encode(document{Timestamp: at.UTC().Format(http.TimeFormat)}); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// blank reads past leading white space and tells whether nothing else
// follows.
func blank(br *bufio.Reader) (bool, error) {
	for {
		c, err := br.ReadByte()
		if errors.Is(err, io.EOF) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false, br.UnreadByte()
		}
	}
}

// zoneless are the layouts of a timestamp without its trailing zone.
var zoneless = []string{
	"Mon, 02 Jan 2006 15:04:05", // RFC 1123
	"Mon, 2 Jan 2006 15:04:05",
	"Monday, 02-Jan-06 15:04:05", // RFC 850
	"Mon Jan _2 15:04:05 2006",   // ANSI C, which has no zone and means GMT
	"02 Jan 2006 15:04:05",
}

// ParseTime reads a timestamp: the connector's SimpleDateFormat output in
// any zone Java names (zones.go), an HTTP-date with a zone name or a
// numeric offset, the ANSI C form, or RFC 3339. The result is in UTC.
func ParseTime(s string) (time.Time, bool) {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return time.Time{}, false
	}
	if t, ok := parseJava(s); ok {
		return t, true
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), true
	}
	if t, err := time.Parse(time.ANSIC, s); err == nil {
		return t.UTC(), true
	}
	i := strings.LastIndexByte(s, ' ')
	if i < 0 {
		return time.Time{}, false
	}
	offs, ok := zoneOffsets(s[i+1:])
	if !ok {
		return time.Time{}, false
	}
	for _, l := range zoneless {
		if t, err := time.ParseInLocation(l, s[:i], time.UTC); err == nil {
			return earliest(t, offs), true
		}
	}
	return time.Time{}, false
}

// clip keeps what the client sent short and on one line before a reason
// echoes it.
func clip(s string, n int) string {
	s = strings.Map(func(c rune) rune {
		if unicode.IsControl(c) || c == '\u2028' || c == '\u2029' {
			return ' '
		}
		return c
	}, strings.ToValidUTF8(s, "?"))
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "..."
	}
	return s
}
