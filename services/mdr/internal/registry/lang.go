package registry

import (
	"sort"
	"strings"

	"golang.org/x/text/language"

	mdrv1 "fris.dev/proto/mdr/v1"
)

// LangOrder ranks language codes by an Accept-Language header. The zero
// value keeps stored order.
type LangOrder struct {
	bases []language.Base
}

// ParseAcceptLanguage reads an Accept-Language header; a malformed header is
// treated as absent, as HTTP caches and browsers do.
func ParseAcceptLanguage(h string) LangOrder {
	if strings.TrimSpace(h) == "" {
		return LangOrder{}
	}
	tags, _, err := language.ParseAcceptLanguage(h)
	if err != nil {
		return LangOrder{}
	}
	var o LangOrder
	for _, t := range tags {
		// Only a language the tag names: for "und" (undetermined), Base
		// guesses English.
		if b, conf := t.Base(); conf == language.Exact {
			o.bases = append(o.bases, b)
		}
	}
	return o
}

func (o LangOrder) rank(code string) int {
	t, err := language.Parse(code)
	if err != nil {
		return len(o.bases)
	}
	b, conf := t.Base()
	if conf != language.Exact {
		// "und" and the like name no language; Base would guess English.
		return len(o.bases)
	}
	for i, want := range o.bases {
		if b == want {
			return i
		}
	}
	return len(o.bases)
}

// Sort returns ds with the requested languages first, in preference order;
// the rest keep their stored order and nothing is dropped. ds itself is not
// changed, because it is shared between requests.
func (o LangOrder) Sort(ds []*mdrv1.Designation) []*mdrv1.Designation {
	if len(o.bases) == 0 || len(ds) < 2 {
		return ds
	}
	out := append([]*mdrv1.Designation(nil), ds...)
	sort.SliceStable(out, func(i, j int) bool { return o.rank(out[i].GetLang()) < o.rank(out[j].GetLang()) })
	return out
}

// IsZero reports whether no language was requested.
func (o LangOrder) IsZero() bool { return len(o.bases) == 0 }
