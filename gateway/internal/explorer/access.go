package explorer

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"fris.dev/gateway/internal/routes"
	"fris.dev/pkg/identity"
)

// access is what a route asks of its visitor. Every route declares one
// where it is registered, and Register refuses a route that does not, so
// a new page cannot forget its check: the gate runs before the page.
type access int

const (
	undeclared access = iota
	// public: anyone, signed in or not.
	public
	// signedIn: a signed-in user (the account pages).
	signedIn
	// researcher: a signed-in user whose token grants
	// identity.ScopeResearcher: the inquiry pages. The broker checks it
	// again, and ownership on every call; the check here explains the
	// refusal and whom to ask.
	researcher
	// operator: a signed-in user whose token grants identity.ScopeOperator.
	// The services check it again; the check here spares a call and
	// explains the refusal.
	operator
	// userAdmin: a signed-in user whose token grants identity.ScopeOperator
	// or identity.ScopeUserAdmin: the users view. Auth checks the role
	// again, and keeps a user administrator off privileged users.
	userAdmin
)

func (a access) String() string {
	switch a {
	case public:
		return "public"
	case signedIn:
		return "signed in"
	case researcher:
		return identity.ScopeResearcher
	case operator:
		return identity.ScopeOperator
	case userAdmin:
		return identity.ScopeOperator + " or " + identity.ScopeUserAdmin
	}
	return "undeclared"
}

// route is one path of the Explorer: a page (page), or a plain handler
// (handler) that reads no session and so can only be public.
type route struct {
	pattern string
	access  access
	page    func(*req) error
	handler http.Handler
}

// routes is every path the Explorer serves, with what each asks.
func (a *App) routes() []route {
	rs := a.registryRoutes()
	rs = append(rs, a.operatorRoutes()...)
	rs = append(rs, a.userRoutes()...)
	rs = append(rs, a.userCredentialRoutes()...)
	rs = append(rs, a.clientRoutes()...)
	rs = append(rs, a.keyRoutes()...)
	rs = append(rs, a.accountRoutes()...)
	rs = append(rs, a.auditRoutes()...)
	rs = append(rs, a.settingsRoutes()...)
	rs = append(rs, a.throttleRoutes()...)
	rs = append(rs, a.passkeyRoutes()...)
	rs = append(rs, a.credentialRoutes()...)
	rs = append(rs, a.totpRoutes()...)
	rs = append(rs, a.exposeRoutes()...)
	return append(rs, a.inquiryRoutes()...)
}

// Register adds the Explorer's paths, and the landing page at /, to mux.
// It panics on a route without its access declared: a programming error
// that every test starting the Explorer catches.
func (a *App) Register(mux routes.Mux) {
	for _, rt := range a.routes() {
		mux.Handle(rt.pattern, a.handler(rt))
	}
}

// handler is rt's handler with its gate in front.
func (a *App) handler(rt route) http.Handler {
	if rt.handler != nil && rt.page == nil && rt.access == public {
		return rt.handler
	}
	if rt.page != nil && rt.handler == nil {
		switch rt.access {
		case public:
			return a.page(rt.page)
		case signedIn:
			return a.page(gated(a.gateSignedIn, rt.page))
		case researcher:
			return a.page(gated(a.gateResearcher, rt.page))
		case operator:
			return a.page(gated(a.gateOperator, rt.page))
		case userAdmin:
			return a.page(gated(a.gateUserAdmin, rt.page))
		}
	}
	panic(fmt.Sprintf("explorer: route %q declares no access it can enforce (%v)", rt.pattern, rt.access))
}

// gated runs page when gate lets the request through; a gate that answered
// (a redirect to sign in) or refused ends the request there.
func gated(gate func(*req) (bool, error), page func(*req) error) func(*req) error {
	return func(q *req) error {
		if ok, err := gate(q); !ok {
			return err
		}
		return page(q)
	}
}

// gateSignedIn sends a visitor who is not signed in to sign in (GET pages)
// or refuses (anything else); false when it answered.
func (a *App) gateSignedIn(q *req) (bool, error) {
	if q.sess != nil && q.sess.User != nil && !q.id.Anonymous() {
		return true, nil
	}
	// A page is sent to sign in; htmx's and EventSource's requests, which
	// cannot follow, are refused.
	if q.r.Method == http.MethodGet && a.Configured() && q.r.Header.Get("HX-Request") == "" &&
		!strings.Contains(q.r.Header.Get("Accept"), "text/event-stream") {
		v := a.view(q, "inq.title")
		http.Redirect(q.w, q.r, v.SignIn, http.StatusSeeOther)
		return false, nil
	}
	if !a.Configured() {
		return false, fail(http.StatusServiceUnavailable, "error.notconfigured")
	}
	return false, fail(http.StatusUnauthorized, "inq.err.signin")
}

// isResearcher reports whether the signed-in user may write inquiries.
func (q *req) isResearcher() bool { return q.id.HasScope(identity.ScopeResearcher) }

// gateResearcher is gateSignedIn, then a 403 with the reason and whom to
// ask for a user without the researcher role.
func (a *App) gateResearcher(q *req) (bool, error) {
	if ok, err := a.gateSignedIn(q); !ok {
		return false, err
	}
	if !q.isResearcher() {
		return false, fail(http.StatusForbidden, "inq.err.role", identity.ScopeResearcher)
	}
	return true, nil
}

// isOperator reports whether the signed-in user may see the operator views.
func (q *req) isOperator() bool { return q.id.HasScope(identity.ScopeOperator) }

// isUserAdmin reports whether the signed-in user may use the users view.
func (q *req) isUserAdmin() bool { return q.isOperator() || q.id.HasScope(identity.ScopeUserAdmin) }

// gateOperator lets operators through (true). Others are answered here: a
// page asked for without a session goes to sign-in and comes back; a user
// without the operator scope gets 403 with the reason.
func (a *App) gateOperator(q *req) (bool, error) {
	return a.gateRole(q, q.isOperator(), "op.error.scope", identity.ScopeOperator)
}

// gateUserAdmin is gateOperator for the users view: operators and user
// administrators.
func (a *App) gateUserAdmin(q *req) (bool, error) {
	return a.gateRole(q, q.isUserAdmin(), "op.error.userscope", userAdmin.String())
}

func (a *App) gateRole(q *req, ok bool, reason, needs string) (bool, error) {
	if q.id.Anonymous() {
		if q.r.Method == http.MethodGet && a.Configured() {
			http.Redirect(q.w, q.r, LoginPath+"?"+url.Values{"return": {returnTarget(q.r)}}.Encode(), http.StatusFound)
			return false, nil
		}
		return false, fail(http.StatusForbidden, "op.error.signin")
	}
	if !ok {
		return false, fail(http.StatusForbidden, reason, needs)
	}
	return true, nil
}
