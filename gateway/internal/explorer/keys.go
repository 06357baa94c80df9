package explorer

import (
	"crypto/subtle"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"sort"

	authv1 "fris.dev/proto/auth/v1"
)

// The signing keys view: auth's token signing keys with their state, and
// "rotate now" (ListKeys and RotateKeys, with the operator's identity).
const (
	KeysPath       = OperatorPath + "keys"
	KeysRotatePath = KeysPath + "/rotate"
)

func (a *App) keyRoutes() []route {
	return []route{
		{pattern: "GET " + KeysPath, access: operator, page: a.keys},
		{pattern: "POST " + KeysRotatePath, access: operator, page: a.rotateKeys},
	}
}

// keyLine is a signing key as the list shows it.
type keyLine struct {
	Kid, Alg string
	Created  when
	// State: "active" (signs new tokens), "published" (retired, still
	// published for the tokens it signed until PublishUntil) or "retired".
	State        string
	Retired      when
	PublishUntil when
}

type keysData struct {
	Keys     []keyLine
	Done     string
	DoneKind string
}

func (a *App) keys(q *req) error {
	if a.cfg.Users == nil {
		return fail(http.StatusServiceUnavailable, "op.error.noauth")
	}
	res, err := a.cfg.Users.ListKeys(q.ctx, &authv1.ListKeysRequest{})
	if err != nil {
		return err
	}
	v := a.opView(q, "op.keys.title", "keys")
	var d keysData
	now := a.cfg.Now().Unix()
	// Newest first, so the active keys lead; keys made in the same second
	// (one of each algorithm at a rotation) keep auth's order, RSA first.
	ks := slices.Clone(res.GetKeys())
	sort.SliceStable(ks, func(i, j int) bool { return ks[i].GetCreated() > ks[j].GetCreated() })
	for _, k := range ks {
		l := keyLine{Kid: k.GetKid(), Alg: k.GetAlg(), Created: a.whenUnix(k.GetCreated()), Retired: a.whenUnix(k.GetRetired()), PublishUntil: a.whenUnix(k.GetPublishUntil())}
		switch {
		case k.GetActive():
			l.State = "active"
		case int64(k.GetPublishUntil()) > now:
			l.State = "published"
		default:
			l.State = "retired"
		}
		d.Keys = append(d.Keys, l)
	}
	// The status line only where the list bears it out.
	if kid := q.r.URL.Query().Get("kid"); q.r.URL.Query().Get("done") == "rotated" && kid != "" {
		for _, k := range d.Keys {
			if k.Kid == kid && k.State == "active" {
				d.Done, d.DoneKind = v.T("op.keys.done.rotated", kid), "rotated"
			}
		}
	}
	v.Data = d
	a.render(q, http.StatusOK, "operator-keys", v)
	return nil
}

// rotateKeys makes a new key of every algorithm active, after the
// confirmation.
func (a *App) rotateKeys(q *req) error {
	if !sameOrigin(q.r) {
		return fail(http.StatusForbidden, "error.crosssite")
	}
	q.r.Body = http.MaxBytesReader(q.w, q.r.Body, 16<<10)
	if err := q.r.ParseForm(); err != nil {
		return formError(err)
	}
	if subtle.ConstantTimeCompare([]byte(q.r.PostForm.Get(CSRFField)), []byte(q.sess.CSRF)) != 1 {
		return fail(http.StatusForbidden, "error.csrf")
	}
	if a.cfg.Users == nil {
		return fail(http.StatusServiceUnavailable, "op.error.noauth")
	}
	if q.r.PostForm.Get("confirm") != "yes" {
		return fail(http.StatusBadRequest, "op.users.error.confirm")
	}
	res, err := a.cfg.Users.RotateKeys(q.ctx, &authv1.RotateKeysRequest{})
	if err != nil {
		return a.actionFailed(err)
	}
	http.Redirect(q.w, q.r, KeysPath+"?"+url.Values{"done": {"rotated"}, "kid": {res.GetKey().GetKid()}}.Encode(), http.StatusSeeOther)
	return nil
}

// At renders a moment without its age (a future one has none): the time,
// machine-readable.
func (v *view) At(w when) template.HTML {
	if !w.Set {
		return template.HTML(`<span class="muted">` + template.HTMLEscapeString(v.T("op.never")) + `</span>`)
	}
	return template.HTML(`<time datetime="` + template.HTMLEscapeString(w.ISO) + `">` + template.HTMLEscapeString(w.Text) + `</time>`)
}
