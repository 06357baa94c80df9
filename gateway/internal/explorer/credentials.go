package explorer

import (
	"net/http"
	"net/url"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	authv1 "fris.dev/proto/auth/v1"
)

// Every way to sign in to the account, on the account page: the password,
// registered keys and passkeys, with how and when each was added, when it
// was last used and whether anyone has proven it (docs/security.md,
// Credential lifecycle); keys and passkeys can be removed. The page also
// names what the owner's proof of the address (a reset or verification
// link) removed.
const CredentialRemove = AccountPath + "/credentials/remove"

func (a *App) credentialRoutes() []route {
	return []route{
		{pattern: "POST " + CredentialRemove, access: signedIn, page: a.credentialRemove},
	}
}

// credentialLine is a credential as the account page and the console
// list it.
type credentialLine struct {
	Kind, ID, Description, AddedBy string
	Added, Used, Removed           when
	Proven, Removable              bool
	FormID                         string
}

// credentialData is the account page's credential section: Off when the
// identity provider could not say; Done what just succeeded ("removed");
// Error a message in the page's language.
type credentialData struct {
	Off     bool
	List    []credentialLine
	Removed []credentialLine
	Done    string
	Error   string
}

func (a *App) credentialLines(cs []*authv1.Credential, stem string) []credentialLine {
	var out []credentialLine
	for i, c := range cs {
		out = append(out, credentialLine{Kind: c.GetKind(), ID: c.GetId(), Description: c.GetDescription(), AddedBy: c.GetAddedBy(),
			Added: a.whenUnix(c.GetCreated()), Used: a.whenUnix(c.GetLastUsed()), Removed: a.whenUnix(c.GetRemoved()), Proven: c.GetProven(),
			Removable: c.GetKind() == "key" || c.GetKind() == "passkey" || c.GetKind() == "totp", FormID: stem + strconv.Itoa(i)})
	}
	return out
}

// credentials fills in the section from the identity provider.
func (a *App) credentials(q *req) credentialData {
	d := credentialData{}
	if q.r.URL.Query().Get("credential") == "removed" {
		d.Done = "removed"
	}
	if a.cfg.Auth == nil || q.sess.Token == nil {
		d.Off = true
		return d
	}
	res, err := a.cfg.Auth.ListCredentials(q.bearer(), &authv1.ListCredentialsRequest{})
	if err != nil {
		a.cfg.Log.WarnContext(q.r.Context(), "explorer: account page: credentials", "err", err)
		d.Off = true
		return d
	}
	d.List = a.credentialLines(res.GetCredentials(), "cred-remove-")
	d.Removed = a.credentialLines(res.GetRemoved(), "cred-gone-")
	return d
}

// credentialRemove removes one of the holder's keys or passkeys after the
// confirmation in its row.
func (a *App) credentialRemove(q *req) error {
	if err := formOK(q); err != nil {
		return err
	}
	if a.cfg.Auth == nil || q.sess.Token == nil {
		return fail(http.StatusServiceUnavailable, "error.notconfigured")
	}
	f := q.r.PostForm
	res, err := a.cfg.Auth.RemoveCredential(q.bearer(), &authv1.RemoveCredentialRequest{Kind: f.Get("kind"), Id: f.Get("id"), Proof: f.Get("proof")})
	switch status.Code(err) {
	case codes.OK:
		// One nobody had proven: every token of the user ended, this
		// session's too. Sign this browser out; the next sign-in comes
		// back to the page that says it is removed.
		if res.GetSignedOut() {
			_ = a.cfg.Store.Delete(q.r.Context(), q.sess.ID)
			http.SetCookie(q.w, a.cookie(q.r, ""))
			http.Redirect(q.w, q.r, LoginPath+"?"+url.Values{"return": {AccountPath + "?credential=removed"}}.Encode(), http.StatusSeeOther)
			return nil
		}
	case codes.Unauthenticated:
		a.accountPage(q, http.StatusBadRequest, accountData{credentialError: "acct.cred.proof.wrong"})
		return nil
	case codes.FailedPrecondition:
		a.accountPage(q, http.StatusBadRequest, accountData{credentialError: "acct.cred.last"})
		return nil
	case codes.InvalidArgument:
		a.accountPage(q, http.StatusBadRequest, accountData{credentialError: "acct.cred.refused"})
		return nil
	default:
		return err
	}
	http.Redirect(q.w, q.r, AccountPath+"?credential=removed#creds-heading", http.StatusSeeOther)
	return nil
}
