package explorer

import "net/http"

// Every refusal the Explorer shows says why (its message) and what to do
// next: a message that does not say the way forward gets a hint, by its
// key, else by its status.

// hintKeys are hints for messages that name a reason only.
var hintKeys = map[string]string{
	"error.crosssite":  "error.hint.crosssite",
	"error.forbidden":  "error.hint.forbidden",
	"error.badrequest": "error.hint.badrequest",
	"op.error.form":    "error.hint.form",
	"op.error.refused": "error.hint.form",
}

// selfExplaining are messages that say the way forward themselves.
var selfExplaining = map[string]bool{
	"error.csrf": true, "error.nosignin": true, "error.state": true, "error.nocode": true, "error.exchange": true,
	"op.error.scope": true, "op.error.userscope": true, "inq.err.role": true, "op.users.error.confirm": true,
}

func hintFor(v *view, pe pageError) string {
	if h, ok := hintKeys[pe.key]; ok {
		return v.T(h)
	}
	if selfExplaining[pe.key] {
		return ""
	}
	switch pe.status {
	case http.StatusBadRequest:
		return v.T("error.hint.form")
	case http.StatusForbidden:
		return v.T("error.hint.forbidden")
	}
	return ""
}
