package explorer

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"fris.dev/gateway/internal/httpx"
)

// Reading the inquiry form: multipart, for the expose PDF, within the
// gateway's body limit. A form over the limit is read up to it, no
// further; what was typed before the limit (the fields come before the
// file) goes back into the form with a message, rather than a bare 413.

const (
	// maxFieldBytes bounds the form's fields other than the file, all
	// together: the builder's conditions, up to a thousand sites.
	maxFieldBytes = 1 << 20
	// maxParts bounds the parts of one form.
	maxParts = 10000
)

// errFormTooLarge is a form over the body limit.
var errFormTooLarge = errors.New("the form is over the body limit")

// readForm parses an inquiry form; the PDF, if one was chosen, is
// returned. A form over the limit returns errFormTooLarge with the fields
// read before it (nil when none could be, or the form's CSRF token was not
// among them: then nothing typed is shown back).
func (a *App) readForm(q *req) (url.Values, []byte, string, error) {
	q.r.Body = http.MaxBytesReader(q.w, q.r.Body, a.cfg.MaxUpload)
	mt, _, _ := mime.ParseMediaType(q.r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		err := q.r.ParseForm()
		if tooLarge(err) {
			return nil, nil, "", errFormTooLarge
		}
		if err != nil {
			return nil, nil, "", formError(err)
		}
		if err := a.checkPost(q, q.r.PostForm); err != nil {
			return nil, nil, "", err
		}
		return q.r.PostForm, nil, "", nil
	}
	form, pdf, name, err := readParts(q.r)
	if errors.Is(err, errFormTooLarge) {
		if a.checkPost(q, form) != nil {
			form = nil
		}
		return form, nil, "", err
	}
	if err != nil {
		return nil, nil, "", formError(err)
	}
	if err := a.checkPost(q, form); err != nil {
		return nil, nil, "", err
	}
	return form, pdf, name, nil
}

// readParts reads a multipart form part by part: the fields, and the
// first non-empty file of the field "expose"; any other file is skipped.
func readParts(r *http.Request) (url.Values, []byte, string, error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, nil, "", err
	}
	form := url.Values{}
	var (
		pdf    []byte
		name   string
		budget int64 = maxFieldBytes
	)
	for n := 0; ; n++ {
		if n >= maxParts {
			return form, nil, "", errors.New("too many parts")
		}
		p, err := mr.NextPart()
		if err == io.EOF {
			return form, pdf, name, nil
		}
		if tooLarge(err) {
			return form, nil, "", errFormTooLarge
		}
		if err != nil {
			return form, nil, "", err
		}
		field, file := p.FormName(), p.FileName()
		if file == "" {
			b, err := io.ReadAll(io.LimitReader(p, budget+1))
			if tooLarge(err) {
				return form, nil, "", errFormTooLarge
			}
			if err != nil {
				return form, nil, "", err
			}
			if budget -= int64(len(b)); budget < 0 {
				return form, nil, "", errors.New("the form's fields are too large")
			}
			// The fields go to the broker as proto strings; the body's
			// check (httpx.CheckBodyText) leaves multipart forms to here.
			if !httpx.ValidText(field) || !httpx.ValidText(string(b)) {
				return form, nil, "", httpx.ErrNotUTF8
			}
			form.Add(field, string(b))
			continue
		}
		// A file is read whole, within the body's limit.
		b, err := io.ReadAll(p)
		if tooLarge(err) {
			return form, nil, "", errFormTooLarge
		}
		if err != nil {
			return form, nil, "", err
		}
		if field == "expose" && pdf == nil && len(b) > 0 {
			if !httpx.ValidText(file) {
				return form, nil, "", httpx.ErrNotUTF8
			}
			pdf, name = b, baseName(file)
		}
	}
}

// baseName is an uploaded file's name without any directory a browser
// sent with it.
func baseName(s string) string {
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		s = s[i+1:]
	}
	return s
}

func tooLarge(err error) bool {
	var mb *http.MaxBytesError
	return errors.As(err, &mb)
}

// formTooLarge renders the form again after errFormTooLarge: with the
// fields read (form), else as it was (an inquiry's) or empty (a new one),
// and the message; the file is never kept.
func (a *App) formTooLarge(q *req, form url.Values, f *inquiryForm) error {
	v := a.view(q, "inq.new")
	if form != nil {
		g, _, err := a.formOf(q, v, form, nil)
		if err == nil {
			g.ID, g.Action, g.Expose = f.ID, f.Action, f.Expose
			f = g
		}
	}
	if f.Sites == nil {
		var err error
		if f.Sites, _, err = a.targetSites(q, nil); err != nil {
			return err
		}
	}
	f.Errors = []string{v.T("inq.err.toolarge", sizeText(a.cfg.MaxUpload))}
	f.BadFile = true
	return a.formPage(q, f, http.StatusRequestEntityTooLarge)
}

// LateBody names the requests whose body the gateway's limit must not
// refuse by its declared length: the inquiry form, which reads up to the
// limit itself and comes back with what was typed.
func LateBody(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	rest, ok := strings.CutPrefix(r.URL.Path, InquiriesPath)
	return ok && (rest == "" || strings.Count(rest, "/") == 1 && len(rest) > 1)
}
