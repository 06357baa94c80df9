package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
	"google.golang.org/grpc"

	"fris.dev/pkg/cmdutil"
	brokerv1 "fris.dev/proto/broker/v1"
)

// siteCommands are the site registry's subcommands: create-site, sites and
// update-site.
func siteCommands(t cmdutil.Tool, stdout io.Writer) []*ffcli.Command {
	admin := func(cc *grpc.ClientConn) brokerv1.BrokerAdminClient { return brokerv1.NewBrokerAdminClient(cc) }
	printSite := func(s *brokerv1.Site) {
		fmt.Fprintf(stdout, "%s\t%s\t%s\n", s.GetId(), s.GetNameDe(), s.GetNameEn())
	}
	var c brokerv1.CreateSiteRequest
	create := t.Command(cmdutil.Admin{
		Name: "create-site", Usage: "create-site -id ID -name-de NAME -name-en NAME [-contact C] [-logo-url URL] [-if-missing]",
		Help: "add a site to the registry: banks, upload credentials and inquiries name it by its id",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&c.Id, "id", "", "the site's id: 1-64 letters, digits, '.', '_' or '-' (required)")
			fs.StringVar(&c.NameDe, "name-de", "", "German display name (one of -name-de and -name-en is required; each falls back to the other)")
			fs.StringVar(&c.NameEn, "name-en", "", "English display name")
			fs.StringVar(&c.Contact, "contact", "", "a contact for the site (mailbox or phone)")
			fs.StringVar(&c.LogoUrl, "logo-url", "", "absolute https URL of the site's logo")
			fs.BoolVar(&c.IfMissing, "if-missing", false, "succeed without change when the site exists (idempotent seeding)")
		},
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			s, err := admin(cc).CreateSite(ctx, &c)
			if err != nil {
				return err
			}
			printSite(s)
			return nil
		},
	})
	list := t.Command(cmdutil.Admin{
		Name: "sites", Usage: "sites", Help: "list the site registry: names, whether an active bank reads inquiries, the last reply",
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			res, err := admin(cc).ListSites(ctx, &brokerv1.ListSitesRequest{})
			if err != nil {
				return err
			}
			tw := cmdutil.Table(stdout, "ID\tNAME (DE)\tNAME (EN)\tACTIVE BANK\tLAST REPLY\tCONTACT\tLOGO")
			for _, s := range res.GetSites() {
				last := "-"
				if s.GetLastReplyAt() != nil {
					last = s.GetLastReplyAt().AsTime().Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.GetId(), s.GetNameDe(), s.GetNameEn(), yesNo(s.GetHasActiveBank()), last,
					orDash(s.GetContact()), orDash(s.GetLogoUrl()))
			}
			return tw.Flush()
		},
	})
	var u brokerv1.UpdateSiteRequest
	var nameDE, nameEN, contact, logo string
	var fs *flag.FlagSet
	update := t.Command(cmdutil.Admin{
		Name: "update-site", Usage: "update-site -id ID [-name-de NAME] [-name-en NAME] [-contact C] [-logo-url URL]",
		Help: "change a site's names, contact or logo; only the flags given change (an empty -contact or -logo-url clears it)",
		Flags: func(f *flag.FlagSet) {
			fs = f
			f.StringVar(&u.Id, "id", "", "the site's id (required)")
			f.StringVar(&nameDE, "name-de", "", "German display name")
			f.StringVar(&nameEN, "name-en", "", "English display name")
			f.StringVar(&contact, "contact", "", "a contact for the site")
			f.StringVar(&logo, "logo-url", "", "absolute https URL of the site's logo")
		},
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			fs.Visit(func(f *flag.Flag) {
				v := f.Value.String()
				switch f.Name {
				case "name-de":
					u.NameDe = &v
				case "name-en":
					u.NameEn = &v
				case "contact":
					u.Contact = &v
				case "logo-url":
					u.LogoUrl = &v
				}
			})
			s, err := admin(cc).UpdateSite(ctx, &u)
			if err != nil {
				return err
			}
			printSite(s)
			return nil
		},
	})
	return []*ffcli.Command{create, list, update}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
