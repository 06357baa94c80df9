// Package cli is the auth command: `serve` runs the identity provider, the
// other subcommands manage clients, users and keys through its admin API.
package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/peterbourgon/ff/v3/ffcli"

	"fris.dev/pkg/backup"
	"fris.dev/pkg/cmdutil"
	"fris.dev/pkg/throttles"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/app"
)

// Run executes the command line args (without the program name).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	t := cmdutil.Tool{Name: "auth", EnvPrefix: "FRIS_AUTH", DefaultAddr: "127.0.0.1:9101", Stderr: stderr}
	var cfg app.Config
	serve := t.Serve("run the identity provider", &cfg, func(ctx context.Context, log *slog.Logger) error { return app.Run(ctx, cfg, log) })
	admin := func(cc *grpc.ClientConn) authv1.AuthAdminClient { return authv1.NewAuthAdminClient(cc) }

	var (
		cName, cDesc, cRedirect, cType, cID, cSecret, cAlg string
		cIfMissing                                         bool
	)
	createClient := t.Command(cmdutil.Admin{
		Name: "create-client", Usage: "create-client -name NAME -redirect-url URL[,URL] [flags]",
		Help: "create a client; its secret is printed once",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&cName, "name", "", "display name (required)")
			fs.StringVar(&cDesc, "description", "", "description")
			fs.StringVar(&cRedirect, "redirect-url", "", "redirect URL(s), comma-separated")
			fs.StringVar(&cType, "type", "UNDEFINED", "MDR, FORMREPOSITORY or UNDEFINED")
			fs.StringVar(&cID, "client-id", "", "client id (generated when empty)")
			fs.StringVar(&cSecret, "secret", "", "client secret, >= 16 characters (generated when empty)")
			fs.StringVar(&cAlg, "alg", "RS256", "signing algorithm of the client's access and id tokens: RS256, ES256 or EdDSA")
			fs.BoolVar(&cIfMissing, "if-missing", false, "succeed without change when -client-id exists already")
		},
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			res, err := admin(cc).CreateClient(ctx, &authv1.CreateClientRequest{
				Name: cName, Description: cDesc, RedirectUrl: cRedirect, Type: cType, ClientId: cID, Secret: cSecret, Alg: cAlg,
			})
			if cIfMissing && cID != "" && status.Code(err) == codes.AlreadyExists {
				fmt.Fprintf(stdout, "client %s exists already\n", cID)
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "client_id=%s\nclient_secret=%s\n", res.GetClient().GetClient().GetClientId(), res.GetSecret())
			return nil
		},
	})
	setClient := func(name string, disabled bool) *ffcli.Command {
		return t.Command(cmdutil.Admin{
			Name: name, Usage: name + " CLIENT_ID", Help: map[bool]string{true: "disable a client and end its tokens", false: "enable a client again (its old tokens stay revoked)"}[disabled],
			Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
				id, err := t.One(args, name+" CLIENT_ID")
				if err != nil {
					return err
				}
				_, err = admin(cc).SetClientDisabled(ctx, &authv1.SetClientDisabledRequest{ClientId: id, Disabled: disabled})
				return err
			},
		})
	}
	var (
		upFS                              *flag.FlagSet
		upName, upDesc, upRedirect, upAlg string
	)
	updateClient := t.Command(cmdutil.Admin{
		Name: "update-client", Usage: "update-client [-name N] [-description D] [-redirect-url URL[,URL]] [-alg ALG] CLIENT_ID",
		Help: "change a client's name, description, redirect URLs or signing algorithm; a flag left out keeps its value",
		Flags: func(fs *flag.FlagSet) {
			upFS = fs
			fs.StringVar(&upName, "name", "", "new display name")
			fs.StringVar(&upDesc, "description", "", "new description")
			fs.StringVar(&upRedirect, "redirect-url", "", "new redirect URL(s), comma-separated, replacing the old ones (empty: none)")
			fs.StringVar(&upAlg, "alg", "", "new signing algorithm of its access and id tokens: RS256, ES256 or EdDSA")
		},
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			id, err := t.One(args, "update-client [flags] CLIENT_ID")
			if err != nil {
				return err
			}
			r := &authv1.UpdateClientRequest{ClientId: id}
			upFS.Visit(func(f *flag.Flag) {
				switch f.Name {
				case "name":
					r.Name = &upName
				case "description":
					r.Description = &upDesc
				case "redirect-url":
					r.RedirectUrl = &upRedirect
				case "alg":
					r.Alg = &upAlg
				}
			})
			_, err = admin(cc).UpdateClient(ctx, r)
			return err
		},
	})
	var (
		rotSecret string
		rotRevoke bool
	)
	rotateSecret := t.Command(cmdutil.Admin{
		Name: "rotate-client-secret", Usage: "rotate-client-secret [-secret S] [-revoke-tokens] CLIENT_ID",
		Help: "give a client a new secret, printed once; the old one is refused at once",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&rotSecret, "secret", "", "the new secret, >= 16 characters (generated when empty)")
			fs.BoolVar(&rotRevoke, "revoke-tokens", false, "also end every token issued to the client so far, as revoke-client")
		},
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			id, err := t.One(args, "rotate-client-secret [flags] CLIENT_ID")
			if err != nil {
				return err
			}
			res, err := admin(cc).RotateClientSecret(ctx, &authv1.RotateClientSecretRequest{ClientId: id, Secret: rotSecret, RevokeTokens: rotRevoke})
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "client_id=%s\nclient_secret=%s\n", id, res.GetSecret())
			return nil
		},
	})
	listClients := t.Command(cmdutil.Admin{
		Name: "clients", Usage: "clients", Help: "list every client, disabled ones included",
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			res, err := admin(cc).ListAllClients(ctx, &authv1.ListAllClientsRequest{})
			if err != nil {
				return err
			}
			tw := cmdutil.Table(stdout, "CLIENT ID\tNAME\tTYPE\tALG\tDISABLED\tREDIRECT URL")
			for _, c := range res.GetClients() {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%t\t%s\n", c.GetClient().GetClientId(), c.GetClient().GetName(), c.GetClient().GetType(), c.GetAlg(), c.GetDisabled(), c.GetClient().GetRedirectUrl())
			}
			return tw.Flush()
		},
	})

	var (
		uEmail, uName, uPassword, uContact, uScopes string
		uVerified, uIfMissing                       bool
	)
	createUser := t.Command(cmdutil.Admin{
		Name: "create-user", Usage: "create-user -email EMAIL [-password PW] [flags]", Help: "create a user",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&uEmail, "email", "", "email address (required)")
			fs.StringVar(&uName, "name", "", "real name")
			fs.StringVar(&uPassword, "password", "", "password, as the password policy of serve says (-password-min-length, 12 by default; not a common password, not the email address); none: key login only")
			fs.StringVar(&uContact, "contact", "", "contact information")
			fs.StringVar(&uScopes, "scopes", "", "comma-separated extra scopes, e.g. mdr:secret")
			fs.BoolVar(&uVerified, "email-verified", false, "mark the email as verified")
			fs.BoolVar(&uIfMissing, "if-missing", false, "succeed without change when the email exists already")
		},
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			res, err := admin(cc).CreateUser(ctx, &authv1.CreateUserRequest{
				Email: uEmail, RealName: uName, Password: uPassword, ContactInformation: uContact,
				EmailVerified: uVerified, Scopes: cmdutil.SplitList(uScopes),
			})
			if uIfMissing && status.Code(err) == codes.AlreadyExists {
				fmt.Fprintf(stdout, "user %s exists already\n", uEmail)
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "user_id=%d\n", res.GetUser().GetId())
			return nil
		},
	})
	setUser := func(name string, disabled bool) *ffcli.Command {
		return t.Command(cmdutil.Admin{
			Name: name, Usage: name + " EMAIL", Help: map[bool]string{true: "disable a user and end their tokens", false: "enable a user again (their old tokens stay revoked)"}[disabled],
			Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
				email, err := t.One(args, name+" EMAIL")
				if err != nil {
					return err
				}
				_, err = admin(cc).SetUserDisabled(ctx, &authv1.SetUserDisabledRequest{Email: email, Disabled: disabled})
				return err
			},
		})
	}
	revokeUser := t.Command(cmdutil.Admin{
		Name: "revoke-user", Usage: "revoke-user EMAIL",
		Help: "end every token of a user now (access and refresh; the gateway refuses them within seconds); the user may sign in again",
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			email, err := t.One(args, "revoke-user EMAIL")
			if err != nil {
				return err
			}
			_, err = admin(cc).RevokeUser(ctx, &authv1.RevokeUserRequest{Email: email})
			return err
		},
	})
	revokeClient := t.Command(cmdutil.Admin{
		Name: "revoke-client", Usage: "revoke-client CLIENT_ID",
		Help: "end every token issued to a client now, its users' included; the client may ask for new ones",
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			id, err := t.One(args, "revoke-client CLIENT_ID")
			if err != nil {
				return err
			}
			_, err = admin(cc).RevokeClient(ctx, &authv1.RevokeClientRequest{ClientId: id})
			return err
		},
	})
	var newPassword string
	setPassword := t.Command(cmdutil.Admin{
		Name: "set-password", Usage: "set-password -password PW EMAIL", Help: "set a user's password (ends the user's tokens)",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&newPassword, "password", "", "the new password, as the password policy of serve says (-password-min-length, 12 by default; not a common password, not the email address)")
		},
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			email, err := t.One(args, "set-password -password PW EMAIL")
			if err != nil {
				return err
			}
			_, err = admin(cc).SetPassword(ctx, &authv1.SetPasswordRequest{Email: email, Password: newPassword})
			return err
		},
	})
	var (
		actionList   string
		actionsClear bool
	)
	requireActions := t.Command(cmdutil.Admin{
		Name: "require-actions", Usage: "require-actions -actions verify-email,change-password,add-second-factor EMAIL | -clear EMAIL",
		Help: "lead a user's next sign-in through these actions before any code is issued (replaces the set; docs/security.md, Required actions)",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&actionList, "actions", "", "comma-separated: verify-email, change-password, add-second-factor")
			fs.BoolVar(&actionsClear, "clear", false, "remove every required action")
		},
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			email, err := t.One(args, "require-actions -actions LIST EMAIL")
			if err != nil {
				return err
			}
			if actionsClear == (actionList != "") {
				return fmt.Errorf("give either -actions or -clear")
			}
			var actions []string
			for _, a := range strings.Split(actionList, ",") {
				if a = strings.TrimSpace(a); a != "" {
					actions = append(actions, strings.ReplaceAll(a, "-", "_"))
				}
			}
			_, err = admin(cc).SetRequiredActions(ctx, &authv1.SetRequiredActionsRequest{Email: email, Actions: actions})
			return err
		},
	})
	var (
		scopeList    string
		scopeConfirm bool
	)
	setScopes := t.Command(cmdutil.Admin{
		Name: "set-scopes", Usage: "set-scopes -scopes a,b [-confirm] EMAIL", Help: "set the extra scopes of a user's tokens",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&scopeList, "scopes", "", "comma-separated scopes (empty: none)")
			fs.BoolVar(&scopeConfirm, "confirm", false, "grant although the user's address is unverified or it has unproven credentials (see `auth credentials EMAIL`)")
		},
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			email, err := t.One(args, "set-scopes -scopes a,b [-confirm] EMAIL")
			if err != nil {
				return err
			}
			_, err = admin(cc).SetUserScopes(ctx, &authv1.SetUserScopesRequest{Email: email, Scopes: cmdutil.SplitList(scopeList), Confirm: scopeConfirm})
			return err
		},
	})
	credentials := t.Command(cmdutil.Admin{
		Name: "credentials", Usage: "credentials EMAIL", Help: "list a user's password, keys and passkeys: how each was added, whether it is proven, when last used",
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			email, err := t.One(args, "credentials EMAIL")
			if err != nil {
				return err
			}
			res, err := admin(cc).ListUserCredentials(ctx, &authv1.ListUserCredentialsRequest{Email: email})
			if err != nil {
				return err
			}
			tw := cmdutil.Table(stdout, "KIND\tID\tDESCRIPTION\tCREATED\tADDED BY\tPROVEN\tLAST USED")
			for _, c := range res.GetCredentials() {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%t\t%s\n", c.GetKind(), orDash(c.GetId()), orDash(c.GetDescription()), when(c.GetCreated()),
					orDash(c.GetAddedBy()), c.GetProven(), when(c.GetLastUsed()))
			}
			return tw.Flush()
		},
	})
	removeCredential := func(name, kind string) *ffcli.Command {
		return t.Command(cmdutil.Admin{
			Name: name, Usage: name + " EMAIL ID", Help: "remove a user's " + kind + " (see `auth credentials EMAIL`) and end the user's tokens",
			Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
				if len(args) != 2 {
					return fmt.Errorf("%w: auth %s EMAIL ID", cmdutil.ErrUsage, name)
				}
				_, err := admin(cc).RemoveUserCredential(ctx, &authv1.RemoveUserCredentialRequest{Email: args[0], Kind: kind, Id: args[1]})
				return err
			},
		})
	}
	// removeTOTP: for a user who lost the authenticator app and the
	// recovery codes; the next sign-in is the password's alone.
	removeTOTP := t.Command(cmdutil.Admin{
		Name: "remove-totp", Usage: "remove-totp EMAIL", Help: "remove a user's second factor (authenticator app) and end the user's tokens",
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("%w: auth remove-totp EMAIL", cmdutil.ErrUsage)
			}
			_, err := admin(cc).RemoveUserCredential(ctx, &authv1.RemoveUserCredentialRequest{Email: args[0], Kind: "totp"})
			return err
		},
	})
	listUsers := t.Command(cmdutil.Admin{
		Name: "users", Usage: "users", Help: "list every user (VERIFIED: the address; UNPROVEN: a credential nobody proved; REQUIRED: the actions of the next sign-in)",
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			res, err := admin(cc).ListUsers(ctx, &authv1.ListUsersRequest{})
			if err != nil {
				return err
			}
			// UNPROVEN: a credential nobody proved (`auth credentials EMAIL`).
			tw := cmdutil.Table(stdout, "ID\tEMAIL\tNAME\tDISABLED\tPASSWORD\tVERIFIED\tUNPROVEN\tSCOPES\tREQUIRED")
			for _, u := range res.GetUsers() {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%t\t%t\t%t\t%t\t%s\t%s\n", u.GetId(), u.GetEmail(), orDash(u.GetRealName()), u.GetDisabled(), u.GetHasPassword(),
					u.GetEmailVerified(), u.GetUnprovenCredentials(), strings.Join(u.GetScopes(), ","), orDash(strings.Join(u.GetRequiredActions(), ",")))
			}
			return tw.Flush()
		},
	})
	printKey := func(w io.Writer, k *authv1.SigningKey) {
		state := "active"
		if !k.GetActive() {
			state = "retired, published until " + time.Unix(int64(k.GetPublishUntil()), 0).UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", k.GetKid(), k.GetAlg(), time.Unix(int64(k.GetCreated()), 0).UTC().Format(time.RFC3339), state)
	}
	listKeys := t.Command(cmdutil.Admin{
		Name: "keys", Usage: "keys", Help: "list the signing keys",
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			res, err := admin(cc).ListKeys(ctx, &authv1.ListKeysRequest{})
			if err != nil {
				return err
			}
			tw := cmdutil.Table(stdout, "KID\tALG\tCREATED\tSTATE")
			for _, k := range res.GetKeys() {
				printKey(tw, k)
			}
			return tw.Flush()
		},
	})
	rotate := t.Command(cmdutil.Admin{
		Name: "rotate-keys", Usage: "rotate-keys", Help: "make a new signing key of every algorithm and a new refresh key active now; prints the RSA one",
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			res, err := admin(cc).RotateKeys(ctx, &authv1.RotateKeysRequest{})
			if err != nil {
				return err
			}
			printKey(stdout, res.GetKey())
			return nil
		},
	})
	// Every service's store is copied and put back the same way.
	bk, rs := backup.Commands(t, stdout)
	// And the abuse limits' throttles are listed and lifted the same way.
	th, lt := throttles.Commands(t, stdout)
	return t.Root(serve, createClient, setClient("disable-client", true), setClient("enable-client", false), updateClient, rotateSecret, revokeClient, listClients,
		createUser, setUser("disable-user", true), setUser("enable-user", false), revokeUser, setPassword, requireActions, setScopes, listUsers,
		credentials, removeCredential("remove-key", "key"), removeCredential("remove-passkey", "passkey"), removeTOTP,
		listKeys, rotate, bk, rs, th, lt).ParseAndRun(ctx, args)
}

// orDash shows an empty column as "-", so the table keeps its columns.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// when is a listing's time: RFC 3339 in UTC, "-" for none.
func when(unix uint32) string {
	if unix == 0 {
		return "-"
	}
	return time.Unix(int64(unix), 0).UTC().Format(time.RFC3339)
}
