package explorer

import "unicode/utf8"

// The form's length limits, said in characters, as the form's maxlength
// counts them. The broker stores at most so many bytes (UTF-8): a text
// within the characters that is over the bytes is said in words, since a
// user does not count bytes.

// textLimit is a field's bound: at most Max characters and Max bytes.
type textLimit struct {
	Label string // message key of the field's name
	Max   int
}

// Limits of the broker (services/broker: validate).
const (
	maxLabel       = 500
	maxDescription = 20000
	maxContact     = 500
)

// tooLong is what to say about s over lim, "" when it is within.
func tooLong(v *view, lim textLimit, s string) string {
	chars := utf8.RuneCountInString(s)
	switch {
	case chars > lim.Max:
		return v.T("inq.err.chars", v.T(lim.Label), lim.Max, chars)
	case len(s) > lim.Max:
		return v.T("inq.err.bytes", v.T(lim.Label), lim.Max)
	}
	return ""
}

// checkLengths adds a line to the form's errors for each field too long.
func checkLengths(v *view, f *inquiryForm) {
	for _, c := range []struct {
		lim textLimit
		s   string
		bad *bool
	}{
		{textLimit{"inq.label", maxLabel}, f.Label, &f.BadLabel},
		{textLimit{"inq.description", maxDescription}, f.Description, &f.BadDescription},
		{textLimit{"inq.contact.title", maxContact}, f.Title, nil},
		{textLimit{"inq.contact.first", maxContact}, f.First, nil},
		{textLimit{"inq.contact.last", maxContact}, f.Last, &f.BadLast},
		{textLimit{"inq.contact.phone", maxContact}, f.Phone, nil},
		{textLimit{"inq.contact.org", maxContact}, f.Org, nil},
	} {
		if msg := tooLong(v, c.lim, c.s); msg != "" {
			f.Errors = append(f.Errors, msg)
			if c.bad != nil {
				*c.bad = true
			}
		}
	}
}
