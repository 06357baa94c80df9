// Package contenttype decides which request bodies the upload reads, from
// the Content-Type header the gateway forwards as sent: patient documents
// are XML stored byte for byte, so UTF-8; the upload statistics may come
// under any text type and in ISO-8859-1 as well, because the connector's
// HTTP client labels its string body text/plain; charset=ISO-8859-1.
// A missing Content-Type is XML, as old connectors send none.
package contenttype

import (
	"mime"
	"strconv"
	"strings"
)

// Body is what a request carries.
type Body int

const (
	// Patient is a patient document.
	Patient Body = iota + 1
	// Stats is an upload statistics document.
	Stats
)

// Charset is how a body's bytes are read.
type Charset int

const (
	// Unnamed is a Content-Type without a charset: the XML declaration
	// decides, UTF-8 by default.
	Unnamed Charset = iota
	// UTF8 is UTF-8, or US-ASCII, which is a subset of it.
	UTF8
	// Latin1 is ISO-8859-1.
	Latin1
)

// charsets are the names (IANA's and its aliases, lower case) of the
// charsets read.
var charsets = map[string]Charset{
	"utf-8": UTF8, "utf8": UTF8,
	"us-ascii": UTF8, "ascii": UTF8, "iso646-us": UTF8, "ansi_x3.4-1968": UTF8, "us": UTF8, "csascii": UTF8,
	"iso-8859-1": Latin1, "iso8859-1": Latin1, "iso_8859-1": Latin1, "latin1": Latin1, "l1": Latin1,
	"iso-ir-100": Latin1, "cp819": Latin1, "ibm819": Latin1, "csisolatin1": Latin1, "iso_8859-1:1987": Latin1,
}

// LookupCharset reads a charset name in any case, as a Content-Type or an
// XML declaration names it; false for a charset not read.
func LookupCharset(name string) (Charset, bool) {
	cs, ok := charsets[strings.ToLower(name)]
	return cs, ok
}

// UnsupportedError is a Content-Type the upload does not read; Reason, for
// the client, says what to send instead.
type UnsupportedError struct{ Reason string }

func (e *UnsupportedError) Error() string { return e.Reason }

// Parse reads the Content-Type of a body of kind b ("" when the request has
// none). The error is an *UnsupportedError. Its Reason echoes what was sent,
// so it is valid UTF-8 when contentType is.
func Parse(contentType string, b Body) (Charset, error) {
	if contentType == "" {
		return Unnamed, nil
	}
	stats := b == Stats
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || !(mt == "application/xml" || mt == "text/xml" || strings.HasSuffix(mt, "+xml") ||
		(stats && strings.HasPrefix(mt, "text/"))) {
		want := "application/xml"
		if stats {
			want += " or a text type"
		}
		return Unnamed, &UnsupportedError{Reason: "Content-Type " + contentType + " is not supported: send " + want}
	}
	name := strings.ToLower(strings.TrimSpace(params["charset"]))
	if name == "" {
		return Unnamed, nil
	}
	cs, ok := charsets[name]
	if !ok || cs == Latin1 && !stats {
		want := "UTF-8"
		if stats {
			want += " or ISO-8859-1"
		}
		// Quote escapes what a cut through a character leaves.
		return Unnamed, &UnsupportedError{Reason: "charset " + strconv.Quote(name[:min(len(name), 40)]) + " is not supported: send " + want}
	}
	return cs, nil
}
