// Package wordmatch finds registry items by whole words and word
// prefixes of their designations and definitions, in every language they
// have, and ranks them: designations before definitions, whole words
// before prefixes. A substring inside a word is no match: "age" finds
// "Donor age" and "Age at diagnosis", not "Manager" or "Storage".
package wordmatch

import (
	"strings"
	"unicode"
)

// MaxQuery bounds the words of one query (a search field's).
const MaxQuery = 8

// Tiers of a match, best first.
const (
	NameWord   = iota // every query word is a whole word of a designation
	NamePrefix        // every query word begins a word of a designation
	Definition        // some query word is found in a definition only
	NoMatch
)

// Words splits s into lower-case words: runs of letters and digits.
func Words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Query is a search's words, the first MaxQuery of them.
func Query(s string) []string {
	w := Words(s)
	if len(w) > MaxQuery {
		w = w[:MaxQuery]
	}
	return w
}

// Longest is the query's longest word: the one to ask a substring search
// for candidates with (every match contains it).
func Longest(q []string) string {
	best := ""
	for _, w := range q {
		if len([]rune(w)) > len([]rune(best)) {
			best = w
		}
	}
	return best
}

// Tier is how well the query words q match an item with the designations
// names and the definitions defs (any languages): NoMatch unless every
// query word is a word, or begins a word, of them.
func Tier(q []string, names, defs []string) int {
	if len(q) == 0 {
		return NoMatch
	}
	nameWords, defWords := wordsOf(names), wordsOf(defs)
	tier := NameWord
	for _, w := range q {
		t := NoMatch
		switch {
		case has(nameWords, w, true):
			t = NameWord
		case has(nameWords, w, false):
			t = NamePrefix
		case has(defWords, w, false):
			t = Definition
		}
		tier = max(tier, t)
	}
	return tier
}

func wordsOf(texts []string) []string {
	var out []string
	for _, s := range texts {
		out = append(out, Words(s)...)
	}
	return out
}

// has reports whether w is one of words (whole), or begins one.
func has(words []string, w string, whole bool) bool {
	for _, x := range words {
		if x == w || !whole && strings.HasPrefix(x, w) {
			return true
		}
	}
	return false
}
