package explorer

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzReadParts: any body, within any limit, reads without a panic, its
// fields within their bound and the file only from the expose field.
func FuzzReadParts(f *testing.F) {
	f.Add([]byte("--b\r\nContent-Disposition: form-data; name=\"label\"\r\n\r\nx\r\n--b\r\nContent-Disposition: form-data; name=\"expose\"; filename=\"a/b.pdf\"\r\n\r\n%PDF-1\r\n--b--\r\n"), int64(1000))
	f.Add([]byte("--b\r\nContent-Disposition: form-data; name=\"label\"\r\n\r\nxxxxxxxxxxxxxxxxxxxx\r\n--b--\r\n"), int64(30))
	f.Add([]byte("--b\r\n\r\n--b--"), int64(5))
	f.Fuzz(func(t *testing.T, body []byte, limit int64) {
		if limit <= 0 || limit > 1<<20 {
			limit = 1 << 10
		}
		r := httptest.NewRequest(http.MethodPost, InquiriesPath, bytes.NewReader(body))
		r.Header.Set("Content-Type", "multipart/form-data; boundary=b")
		r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, limit)
		form, pdf, _, err := readParts(r)
		n := 0
		for k, vs := range form {
			n += len(k)
			for _, v := range vs {
				n += len(v)
			}
		}
		if int64(n) > limit || int64(len(pdf)) > limit {
			t.Fatalf("read %d bytes of fields, %d of file, over the limit %d", n, len(pdf), limit)
		}
		if err != nil && pdf != nil {
			t.Fatal("a file with an error")
		}
	})
}

func TestReadPartsKeepsFieldsBeforeTheLimit(t *testing.T) {
	body := "--b\r\nContent-Disposition: form-data; name=\"label\"\r\n\r\nkept\r\n--b\r\nContent-Disposition: form-data; name=\"expose\"; filename=\"C:\\\\x\\\\big.pdf\"\r\n\r\n" +
		string(bytes.Repeat([]byte("x"), 500)) + "\r\n--b--\r\n"
	r := httptest.NewRequest(http.MethodPost, InquiriesPath, bytes.NewReader([]byte(body)))
	r.Header.Set("Content-Type", "multipart/form-data; boundary=b")
	r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 200)
	form, pdf, _, err := readParts(r)
	if err != errFormTooLarge || form.Get("label") != "kept" || pdf != nil {
		t.Fatalf("%v %v %d", err, form, len(pdf))
	}
	r = httptest.NewRequest(http.MethodPost, InquiriesPath, bytes.NewReader([]byte(body)))
	r.Header.Set("Content-Type", "multipart/form-data; boundary=b")
	_, pdf, name, err := readParts(r)
	if err != nil || len(pdf) != 500 || name != "big.pdf" {
		t.Fatalf("%v %d %q", err, len(pdf), name)
	}
}
