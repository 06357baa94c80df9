package explorer

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	authv1 "fris.dev/proto/auth/v1"
)

// The clients view: the identity provider's OAuth clients for operators,
// through auth's admin API with the operator's identity (auth admits the
// gateway to ListAllClients, CreateClient, UpdateClient, RotateClientSecret
// and SetClientDisabled for an operator's token; docs/security.md). A
// secret is shown once, on the page that answers its creation or rotation,
// and never again: auth keeps only its hash.
const (
	ClientsPath       = OperatorPath + "clients"
	ClientCreatePath  = ClientsPath + "/create"
	ClientUpdatePath  = ClientsPath + "/update"
	ClientRotatePath  = ClientsPath + "/rotate-secret"
	ClientDisablePath = ClientsPath + "/disable"
	ClientEnablePath  = ClientsPath + "/enable"
)

// Bounds of the forms, below auth's own (which it checks again): at most
// maxRedirects redirect URLs, of maxRedirectLen bytes each.
const (
	maxRedirects   = 32
	maxRedirectLen = 2048
	maxClientForm  = 96 << 10
)

// clientTypes are the types a client may have, the default first.
var clientTypes = []string{"UNDEFINED", "MDR", "FORMREPOSITORY"}

// clientAlgs are the algorithms a client's tokens may be signed with, the
// default (what Samply clients verify) first.
var clientAlgs = []string{"RS256", "ES256", "EdDSA"}

func (a *App) clientRoutes() []route {
	return []route{
		{pattern: "GET " + ClientsPath, access: operator, page: a.clients},
		{pattern: "POST " + ClientCreatePath, access: operator, page: a.clientAction(clientCreate)},
		{pattern: "POST " + ClientUpdatePath, access: operator, page: a.clientAction(clientUpdate)},
		{pattern: "POST " + ClientRotatePath, access: operator, page: a.clientAction(clientRotate)},
		{pattern: "POST " + ClientDisablePath, access: operator, page: a.clientAction(clientDisable)},
		{pattern: "POST " + ClientEnablePath, access: operator, page: a.clientAction(clientEnable)},
	}
}

// clientLine is a client as the list shows it.
type clientLine struct {
	ID          string // the element id stem of its forms
	ClientID    string
	Name        string
	Description string
	Type        string
	Alg         string
	Redirects   []string
	Disabled    bool
	Created     when
	// Explorer: the client this Explorer signs in with; it is not
	// disabled or rotated here, which would sign every operator out.
	Explorer bool
}

type clientsData struct {
	Clients  []clientLine
	Types    []string
	Algs     []string
	Done     string
	DoneKind string
	// Secret is set on the page that answers a creation or a rotation:
	// the client's new secret, shown this once.
	Secret       string
	SecretClient string
	SecretKind   string
	// ListFailed: the list could not be read (shown with a secret only).
	ListFailed bool
}

func (a *App) clients(q *req) error {
	d, err := a.clientList(q)
	if err != nil {
		return err
	}
	v := a.opView(q, "op.clients.title", "clients")
	// The status line of the action just done, only where the list bears
	// it out: the link's parameters are anyone's to write.
	who, done := q.r.URL.Query().Get("client"), q.r.URL.Query().Get("done")
	for _, c := range d.Clients {
		if who == "" || c.ClientID != who {
			continue
		}
		switch {
		case done == "disabled" && c.Disabled, done == "enabled" && !c.Disabled, done == "updated":
			d.Done, d.DoneKind = v.T("op.clients.done."+done, c.ClientID), done
		}
	}
	v.Data = d
	a.render(q, http.StatusOK, "operator-clients", v)
	return nil
}

// clientList reads every client, sorted by name then id.
func (a *App) clientList(q *req) (clientsData, error) {
	if a.cfg.Users == nil {
		return clientsData{}, fail(http.StatusServiceUnavailable, "op.error.noauth")
	}
	res, err := a.cfg.Users.ListAllClients(q.ctx, &authv1.ListAllClientsRequest{})
	if err != nil {
		return clientsData{}, err
	}
	cs := res.GetClients()
	sort.Slice(cs, func(i, j int) bool {
		ni, nj := strings.ToLower(cs[i].GetClient().GetName()), strings.ToLower(cs[j].GetClient().GetName())
		if ni != nj {
			return ni < nj
		}
		return cs[i].GetClient().GetClientId() < cs[j].GetClient().GetClientId()
	})
	d := clientsData{Types: clientTypes, Algs: clientAlgs}
	for i, r := range cs {
		c := r.GetClient()
		d.Clients = append(d.Clients, clientLine{ID: "client-" + strconv.Itoa(i), ClientID: c.GetClientId(), Name: c.GetName(),
			Description: c.GetDescription(), Type: c.GetType(), Alg: r.GetAlg(), Redirects: splitRedirects(c.GetRedirectUrl()), Disabled: r.GetDisabled(),
			Created: a.whenUnix(r.GetCreated()), Explorer: a.cfg.ClientID != "" && c.GetClientId() == a.cfg.ClientID})
	}
	return d, nil
}

// splitRedirects are the URLs of a comma- or line-separated list.
func splitRedirects(s string) []string {
	var out []string
	for _, u := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// formRedirects is the form's list of redirect URLs as auth takes it
// (comma-separated); false when there are too many or one is too long.
// Their syntax is auth's to check, with its reason shown.
func formRedirects(s string) (string, bool) {
	us := splitRedirects(s)
	if len(us) > maxRedirects {
		return "", false
	}
	for _, u := range us {
		if len(u) > maxRedirectLen {
			return "", false
		}
	}
	return strings.Join(us, ","), true
}

type clientAct int

const (
	clientCreate clientAct = iota
	clientUpdate
	clientRotate
	clientDisable
	clientEnable
)

// clientAction is one of the clients view's forms: same origin, the
// session's CSRF token, a confirmation for the destructive ones. A
// creation or rotation answers with the secret; the others go back to the
// list.
func (a *App) clientAction(act clientAct) func(*req) error {
	return func(q *req) error {
		if !sameOrigin(q.r) {
			return fail(http.StatusForbidden, "error.crosssite")
		}
		q.r.Body = http.MaxBytesReader(q.w, q.r.Body, maxClientForm)
		if err := q.r.ParseForm(); err != nil {
			return formError(err)
		}
		if subtle.ConstantTimeCompare([]byte(q.r.PostForm.Get(CSRFField)), []byte(q.sess.CSRF)) != 1 {
			return fail(http.StatusForbidden, "error.csrf")
		}
		if a.cfg.Users == nil {
			return fail(http.StatusServiceUnavailable, "op.error.noauth")
		}
		f := q.r.PostForm
		id := strings.TrimSpace(f.Get("client_id"))
		if len(id) > 128 || (id == "" && act != clientCreate) {
			return fail(http.StatusBadRequest, "op.clients.error.id")
		}
		// The Explorer's own client: disabling it or changing its secret
		// here would sign everyone out, this operator included; bin/auth
		// and the gateway's secret file do it together.
		if (act == clientDisable || act == clientRotate) && a.cfg.ClientID != "" && id == a.cfg.ClientID {
			return fail(http.StatusBadRequest, "op.clients.error.self")
		}
		if (act == clientDisable || act == clientRotate) && f.Get("confirm") != "yes" {
			return fail(http.StatusBadRequest, "op.users.error.confirm")
		}
		name, desc := strings.TrimSpace(f.Get("name")), strings.TrimSpace(f.Get("description"))
		if len(name) > 256 || len(desc) > 4096 {
			return fail(http.StatusBadRequest, "op.clients.error.size")
		}
		var (
			err    error
			done   string
			secret string
		)
		switch act {
		case clientCreate:
			redirects, ok := formRedirects(f.Get("redirect_urls"))
			typ, alg := f.Get("type"), f.Get("alg")
			if !ok || !contains(clientTypes, typ) || (alg != "" && !contains(clientAlgs, alg)) {
				return fail(http.StatusBadRequest, "op.clients.error.redirects", maxRedirects, maxRedirectLen)
			}
			var res *authv1.CreateClientResponse
			res, err = a.cfg.Users.CreateClient(q.ctx, &authv1.CreateClientRequest{ClientId: id, Name: name, Description: desc, RedirectUrl: redirects, Type: typ, Alg: alg})
			id, secret, done = res.GetClient().GetClient().GetClientId(), res.GetSecret(), "created"
		case clientUpdate:
			redirects, ok := formRedirects(f.Get("redirect_urls"))
			if !ok {
				return fail(http.StatusBadRequest, "op.clients.error.redirects", maxRedirects, maxRedirectLen)
			}
			up := &authv1.UpdateClientRequest{ClientId: id, Name: &name, Description: &desc, RedirectUrl: &redirects}
			// A form without the field (an older page still open) keeps
			// the algorithm.
			if alg := f.Get("alg"); alg != "" {
				if !contains(clientAlgs, alg) {
					return fail(http.StatusBadRequest, "op.clients.error.redirects", maxRedirects, maxRedirectLen)
				}
				up.Alg = &alg
			}
			_, err = a.cfg.Users.UpdateClient(q.ctx, up)
			done = "updated"
		case clientRotate:
			var res *authv1.RotateClientSecretResponse
			res, err = a.cfg.Users.RotateClientSecret(q.ctx, &authv1.RotateClientSecretRequest{ClientId: id, RevokeTokens: f.Get("revoke") == "yes"})
			secret, done = res.GetSecret(), "rotated"
		case clientDisable, clientEnable:
			_, err = a.cfg.Users.SetClientDisabled(q.ctx, &authv1.SetClientDisabledRequest{ClientId: id, Disabled: act == clientDisable})
			done = map[bool]string{true: "disabled", false: "enabled"}[act == clientDisable]
		}
		if err != nil {
			// A taken id is the operator's to fix, with auth's reason.
			if status.Code(err) == codes.AlreadyExists {
				return fail(http.StatusConflict, "op.error.refused", status.Convert(err).Message())
			}
			return a.actionFailed(err)
		}
		if secret == "" {
			http.Redirect(q.w, q.r, ClientsPath+"?"+url.Values{"done": {done}, "client": {id}}.Encode(), http.StatusSeeOther)
			return nil
		}
		return a.showSecret(q, id, secret, done)
	}
}

// showSecret answers a creation or rotation with the list and, above it,
// the new secret: the only time it is shown. The page is not stored
// (no-store, as every page) and a reload would post again, making
// another secret, never showing this one.
func (a *App) showSecret(q *req, id, secret, kind string) error {
	// The change is made: the secret is shown even when the list cannot
	// be read, else it would be lost (and, rotated, the old one with it).
	d, err := a.clientList(q)
	if err != nil {
		a.cfg.Log.WarnContext(q.ctx, "explorer: listing the clients after a new secret", "err", err)
		d = clientsData{Types: clientTypes, ListFailed: true}
	}
	v := a.opView(q, "op.clients.title", "clients")
	d.Secret, d.SecretClient, d.SecretKind = secret, id, kind
	v.Data = d
	a.render(q, http.StatusOK, "operator-clients", v)
	return nil
}
