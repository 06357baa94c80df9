package explorer

import (
	"net/url"
	"strings"
	"sync"

	"fris.dev/gateway/internal/explorer/querybuild"
	"fris.dev/pkg/samplyquery"
)

// Queries in words (querybuild's Sentence) on the inquiry pages: the data
// elements of every query a page shows are looked up once each, a few at a
// time, so a page costs a registry call per distinct element, not per chip.

const (
	// maxWordsElements bounds the elements one page looks up; any beyond
	// are said by their URNs.
	maxWordsElements = 100
	// wordsLookups is how many lookups run at once.
	wordsLookups = 4
)

// words is a query in words as the templates show it.
type words struct {
	S querybuild.Sentence
	// Label names the list of chips; Empty is said for a query without
	// conditions.
	Label, Empty string
}

func newWords(v *view, s querybuild.Sentence) words {
	return words{S: s, Label: v.T("qw.label"), Empty: v.T("qw.empty")}
}

// wordsOf says stored queries in the page's language, in order. The
// registry not answering is not an error: the elements are then said by
// their URNs, and the XML stays on the page.
func (a *App) wordsOf(q *req, v *view, docs ...string) []words {
	parsed := make([]*samplyquery.Query, len(docs))
	var urns []string
	seen := map[string]bool{}
	for i, doc := range docs {
		p, err := samplyquery.Parse([]byte(doc))
		if err != nil {
			continue
		}
		parsed[i] = p
		for _, k := range querybuild.KeysOf(p) {
			if !seen[k] {
				seen[k] = true
				urns = append(urns, k)
			}
		}
	}
	els := a.elements(q, urns)
	out := make([]words, len(docs))
	for i, p := range parsed {
		s := querybuild.Sentence{Unreadable: true}
		if p != nil {
			s = querybuild.WordsOfQuery(p, els, q.lang)
		}
		out[i] = newWords(v, s)
	}
	return out
}

// builderWords says the builder's query; a query it keeps is said as
// stored.
func (a *App) builderWords(q *req, v *view, b *querybuild.Builder) words {
	if b.Conditions() == 0 && b.Kept != "" {
		return a.wordsOf(q, v, b.Kept)[0]
	}
	return newWords(v, b.Words(q.lang))
}

// elements looks up data elements for the words, at most
// maxWordsElements, wordsLookups at a time; one the registry does not
// give is left out.
func (a *App) elements(q *req, urns []string) querybuild.Elements {
	if len(urns) > maxWordsElements {
		urns = urns[:maxWordsElements]
	}
	found := make([]*querybuild.Element, len(urns))
	var wg sync.WaitGroup
	slots := make(chan struct{}, wordsLookups)
	for i, urn := range urns {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			e, err := a.element(q, urn)
			if err != nil {
				a.cfg.Log.WarnContext(q.ctx, "explorer: the registry did not describe a query's data element", "urn", urn, "err", err)
				return
			}
			found[i] = e
		}()
	}
	wg.Wait()
	els := querybuild.Elements{}
	for i, e := range found {
		if e != nil {
			els[urns[i]] = e
		}
	}
	return els
}

// removing reports a form sent by a chip's remove button.
func removing(form url.Values) bool { return form.Get("qb.remove") != "" }

// edited is the form as it comes back after a condition was removed: the
// errors of a form being edited are not yet errors (a chosen file is still
// lost, and says so).
func (f *inquiryForm) edited() *inquiryForm {
	f.Errors = nil
	f.BadLabel, f.BadLast, f.BadSites, f.BadExpiry, f.BadFile = false, false, false, false, false
	return f
}

// csvQueryLine heads a CSV file with its query in words: a comment line
// ("# Query: ..."), which spreadsheet and data frame readers can be told
// to skip; empty for a query the words cannot say.
func csvQueryLine(v *view, w words) string {
	text := w.S.String()
	switch {
	case w.S.Unreadable:
		return ""
	case w.S.Empty():
		text = w.Empty
	}
	text = strings.Join(strings.Fields(text), " ")
	return "# " + v.T("qw.column") + ": " + commentSafe(text) + "\n"
}

// commentSafe keeps a spreadsheet that splits the comment line at its
// commas (or semicolons, or tabs) from reading a piece as a formula: the
// values in it are the researcher's, the designations the registry's.
func commentSafe(s string) string {
	var b strings.Builder
	start := false
	for _, r := range s {
		switch {
		case r == ',' || r == ';' || r == '\t':
			start = true
		case start && r == ' ':
		case start && strings.ContainsRune("=+-@", r):
			b.WriteByte('\'')
			start = false
		default:
			start = false
		}
		b.WriteRune(r)
	}
	return b.String()
}
