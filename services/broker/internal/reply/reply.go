// Package reply reads what a bank answers to an inquiry: a text body in any
// charset that is either a plain count ("42") or a JSON result document.
// Two JSON shapes carry a count: {"count": N} and share-dto's Reply
// {"donor": {"label", "count", "stratifications": [{"title", "strata":
// [{"label", "count"}]}]}, "sample": {...}, "site", "redirectUrl"}, whose
// donor count is the number of donors found. Anything else is kept as sent
// and is unreadable: it has no count, which is not a count of 0.
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

// Result is what FRIS reads from a reply. A reply without Count is
// unreadable: it is kept as sent, and no consumer may show it as 0.
type Result struct {
	// Count is the plain count, the "count" of {"count": N}, or the donor
	// count of a Samply Reply document.
	Count *int32
	// Donor and Sample are the entities of a Samply Reply document.
	Donor, Sample *Entity
}

// Readable reports whether the reply carries a count.
func (r Result) Readable() bool { return r.Count != nil }

// Entity is one side of a Samply Reply (share-dto's ReplyEntity): a count
// of donors or samples and its breakdowns.
type Entity struct {
	Label           string
	Count           int32
	Stratifications []Stratification
}

// Stratification is a breakdown of an entity's count by one attribute.
type Stratification struct {
	Title  string
	Strata []Stratum
}

// Stratum is one row of a stratification.
type Stratum struct {
	Label string
	Count int32
}

// Count returns the count a reply carries, if any.
func Count(text string) (int32, bool) {
	r := Parse(text)
	if r.Count == nil {
		return 0, false
	}
	return *r.Count, true
}

// Parse reads a reply's text. A Samply Reply document must be well formed
// throughout (every count a non-negative 32-bit integer, every label a
// string): a half-read document would show a researcher numbers the bank
// did not send.
func Parse(text string) Result {
	s := strings.TrimSpace(text)
	s = strings.TrimPrefix(s, "\uFEFF")
	if s == "" {
		return Result{}
	}
	if n, ok := plain(s); ok {
		return Result{Count: &n}
	}
	if s[0] != '{' {
		return Result{}
	}
	var doc map[string]any
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil || d.More() {
		return Result{}
	}
	if c, ok := doc["count"]; ok {
		if n, ok := number(c); ok {
			return Result{Count: &n}
		}
		return Result{}
	}
	donor, ok := entity(doc["donor"])
	if !ok || donor == nil {
		return Result{}
	}
	sample, ok := entity(doc["sample"])
	if !ok {
		return Result{}
	}
	n := donor.Count
	return Result{Count: &n, Donor: donor, Sample: sample}
}

// entity reads a ReplyEntity; absent or null is (nil, true). Its count is
// required: share-dto always writes it.
func entity(v any) (*Entity, bool) {
	if v == nil {
		return nil, true
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	e := &Entity{}
	if e.Label, ok = text(m["label"]); !ok {
		return nil, false
	}
	if e.Count, ok = number(m["count"]); !ok {
		return nil, false
	}
	if m["stratifications"] == nil {
		return e, true
	}
	list, ok := m["stratifications"].([]any)
	if !ok {
		return nil, false
	}
	for _, item := range list {
		sm, ok := item.(map[string]any)
		if !ok {
			return nil, false
		}
		var st Stratification
		if st.Title, ok = text(sm["title"]); !ok {
			return nil, false
		}
		if sm["strata"] != nil {
			rows, ok := sm["strata"].([]any)
			if !ok {
				return nil, false
			}
			for _, row := range rows {
				rm, ok := row.(map[string]any)
				if !ok {
					return nil, false
				}
				var r Stratum
				if r.Label, ok = text(rm["label"]); !ok {
					return nil, false
				}
				if r.Count, ok = number(rm["count"]); !ok {
					return nil, false
				}
				st.Strata = append(st.Strata, r)
			}
		}
		e.Stratifications = append(e.Stratifications, st)
	}
	return e, true
}

// text accepts a JSON string or null (share-dto leaves labels unset).
func text(v any) (string, bool) {
	if v == nil {
		return "", true
	}
	s, ok := v.(string)
	return s, ok
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
