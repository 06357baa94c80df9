// Package reply reads what a bank answers to an inquiry: a text body in any
// charset that is either a plain count ("42") or a JSON result document.
// Two JSON shapes carry a count: {"count": N} and the Samply result reply
// {"donor": {"count": N, ...}, "sample": {...}, ...}, whose donor count is
// the number of patients/donors found. Anything else is kept without a
// count.
package reply

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"mime"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
)

// ErrCharset: the Content-Type names a charset FRIS cannot decode.
var ErrCharset = errors.New("unknown charset")

// Decode turns body into UTF-8 text by the charset of contentType (UTF-8
// when none is named). Bytes that are not valid in the charset become
// U+FFFD, so the result is always valid UTF-8.
func Decode(body []byte, contentType string) (string, error) {
	charset := ""
	if contentType != "" {
		if _, params, err := mime.ParseMediaType(contentType); err == nil {
			charset = params["charset"]
		}
	}
	charset = strings.TrimSpace(charset)
	if charset == "" || strings.EqualFold(charset, "utf-8") || strings.EqualFold(charset, "utf8") {
		return strings.ToValidUTF8(string(body), "\uFFFD"), nil
	}
	enc, err := htmlindex.Get(charset)
	if err != nil {
		return "", fmt.Errorf("%w %q", ErrCharset, charset)
	}
	if enc == encoding.Replacement {
		return "", fmt.Errorf("%w %q", ErrCharset, charset)
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return "", fmt.Errorf("%w %q: %v", ErrCharset, charset, err)
	}
	// A byte order mark is never content.
	return strings.TrimPrefix(strings.ToValidUTF8(string(out), "\uFFFD"), "\uFEFF"), nil
}

// Count returns the count a reply carries, if any.
func Count(text string) (int32, bool) {
	s := strings.TrimSpace(text)
	s = strings.TrimPrefix(s, "\uFEFF")
	if s == "" {
		return 0, false
	}
	if n, ok := plain(s); ok {
		return n, true
	}
	if s[0] != '{' {
		return 0, false
	}
	var doc map[string]any
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil || d.More() {
		return 0, false
	}
	if c, ok := doc["count"]; ok {
		return number(c)
	}
	if donor, ok := doc["donor"].(map[string]any); ok {
		return number(donor["count"])
	}
	return 0, false
}

// plain accepts a non-negative decimal integer that fits 32 bits.
func plain(s string) (int32, bool) {
	if !utf8.ValidString(s) {
		return 0, false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

// number accepts a JSON number that is a non-negative integer (1e3 and 5.0
// included) within 32 bits.
func number(v any) (int32, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if v, err := n.Int64(); err == nil {
		if v < 0 || v > math.MaxInt32 {
			return 0, false
		}
		return int32(v), true
	}
	f, err := n.Float64()
	if err != nil || f < 0 || f > math.MaxInt32 || f != math.Trunc(f) {
		return 0, false
	}
	return int32(f), true
}
