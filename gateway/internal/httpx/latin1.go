package httpx

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Latin1Segments reads a path segment that is not UTF-8 once decoded as
// ISO-8859-1, on the paths applies names: the Samply connector encodes
// patient ids with URLEncoder.encode(id, "ISO-8859-1"), so "Müller"
// arrives as M%FCller. Such a segment's escapes of bytes 0x80-0xFF are
// rewritten as the UTF-8 escapes of the same characters; everything else of
// the path, its other escapes included (%2B, %2F), stays as sent, so the
// handlers decode it as before. Every other path is left alone, and a
// segment that is valid UTF-8 is read as UTF-8.
func Latin1Segments(applies func(path string) bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if applies(r.URL.Path) && !utf8.ValidString(r.URL.Path) {
			if raw, ok := latin1Path(r.URL.EscapedPath()); ok {
				if p, err := url.PathUnescape(raw); err == nil {
					u := *r.URL
					u.Path, u.RawPath = p, raw
					r2 := *r
					r2.URL = &u
					r = &r2
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// latin1Path rewrites each segment of the escaped path p whose decoded
// bytes are not UTF-8; ok is false when nothing changed.
func latin1Path(p string) (string, bool) {
	segs := strings.Split(p, "/")
	changed := false
	for i, s := range segs {
		d, err := url.PathUnescape(s)
		if err != nil || utf8.ValidString(d) {
			continue
		}
		segs[i] = latin1Escapes(s)
		changed = true
	}
	return strings.Join(segs, "/"), changed
}

// latin1Escapes replaces every %XX escape of a byte from 0x80 up in s by
// the escapes of that character's UTF-8 bytes.
func latin1Escapes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := hex.DecodeString(s[i+1 : i+3]); err == nil && v[0] >= 0x80 {
				for _, c := range []byte(string(rune(v[0]))) {
					fmt.Fprintf(&b, "%%%02X", c)
				}
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
