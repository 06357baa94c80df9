// Package cli is the broker command: `serve` runs the search broker, the
// other subcommands manage the site registry, banks and inquiries through
// its admin API.
package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/timestamppb"

	"fris.dev/pkg/backup"
	"fris.dev/pkg/cmdutil"
	"fris.dev/pkg/throttles"
	brokerv1 "fris.dev/proto/broker/v1"
	"fris.dev/services/broker/internal/app"
	"fris.dev/services/broker/internal/demo"
)

// Run executes the command line args (without the program name).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	t := cmdutil.Tool{Name: "broker", EnvPrefix: "FRIS_BROKER", DefaultAddr: "127.0.0.1:9104", Stderr: stderr}
	var cfg app.Config
	serve := t.Serve("run the search broker", &cfg, func(ctx context.Context, log *slog.Logger) error { return app.Run(ctx, cfg, log) })
	admin := func(cc *grpc.ClientConn) brokerv1.BrokerAdminClient { return brokerv1.NewBrokerAdminClient(cc) }
	printBank := func(b *brokerv1.Bank) {
		fmt.Fprintf(stdout, "%s\t%s\t%s\n", b.GetEmail(), b.GetStatus(), orDash(b.GetSiteId()))
	}

	banks := t.Command(cmdutil.Admin{
		Name: "banks", Usage: "banks", Help: "list every bank with its status and site",
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			res, err := admin(cc).ListBanks(ctx, &brokerv1.ListBanksRequest{})
			if err != nil {
				return err
			}
			tw := cmdutil.Table(stdout, "EMAIL\tSTATUS\tSITE\tREGISTERED\tREPORTED SITE NAME")
			for _, b := range res.GetBanks() {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", b.GetEmail(), b.GetStatus(), orDash(b.GetSiteId()), b.GetRegisteredAt().AsTime().Format(time.RFC3339), orDash(b.GetReportedSite()))
			}
			return tw.Flush()
		},
	})
	bankSite := func(name, help string, approve bool) *ffcli.Command {
		var site string
		return t.Command(cmdutil.Admin{
			Name: name, Usage: name + " -site SITE EMAIL", Help: help,
			Flags: func(fs *flag.FlagSet) { fs.StringVar(&site, "site", "", "the site the bank belongs to (required)") },
			Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
				email, err := t.One(args, name+" -site SITE EMAIL")
				if err != nil {
					return err
				}
				var b *brokerv1.Bank
				if approve {
					b, err = admin(cc).ApproveBank(ctx, &brokerv1.ApproveBankRequest{Email: email, SiteId: site})
				} else {
					b, err = admin(cc).LinkBankSite(ctx, &brokerv1.LinkBankSiteRequest{Email: email, SiteId: site})
				}
				if err != nil {
					return err
				}
				printBank(b)
				return nil
			},
		})
	}
	deleteBank := t.Command(cmdutil.Admin{
		Name: "delete-bank", Usage: "delete-bank EMAIL", Help: "delete a bank; its token stops working",
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			email, err := t.One(args, "delete-bank EMAIL")
			if err != nil {
				return err
			}
			_, err = admin(cc).DeleteBank(ctx, &brokerv1.AdminDeleteBankRequest{Email: email})
			return err
		},
	})

	var cf contentFlags
	var author string
	create := t.Command(cmdutil.Admin{
		Name: "create-inquiry", Usage: "create-inquiry -author ID -label L -query FILE -contact-lastname N -sites a,b [flags]",
		Help: "create a draft inquiry from files and flags; prints it as JSON",
		Flags: func(fs *flag.FlagSet) {
			cf.register(fs)
			fs.StringVar(&author, "author", "", "the author: a researcher's user id (required)")
		},
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			c, err := cf.content()
			if err != nil {
				return err
			}
			in, err := admin(cc).CreateInquiry(ctx, &brokerv1.CreateInquiryRequest{Author: author, Content: c})
			if err != nil {
				return err
			}
			return printJSON(stdout, in)
		},
	})
	var uf contentFlags
	update := t.Command(cmdutil.Admin{
		Name: "update-inquiry", Usage: "update-inquiry -label L -query FILE -contact-lastname N -sites a,b [flags] ID",
		Help:  "replace an inquiry's content (the revision increments); prints it as JSON",
		Flags: uf.register,
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			id, err := t.One(args, "update-inquiry [flags] ID")
			if err != nil {
				return err
			}
			c, err := uf.content()
			if err != nil {
				return err
			}
			in, err := admin(cc).UpdateInquiry(ctx, &brokerv1.UpdateInquiryRequest{Id: id, Content: c})
			if err != nil {
				return err
			}
			return printJSON(stdout, in)
		},
	})
	state := func(name, help string, call func(context.Context, brokerv1.BrokerAdminClient, string) (*brokerv1.Inquiry, error)) *ffcli.Command {
		return t.Command(cmdutil.Admin{
			Name: name, Usage: name + " ID", Help: help,
			Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
				id, err := t.One(args, name+" ID")
				if err != nil {
					return err
				}
				in, err := call(ctx, admin(cc), id)
				if err != nil {
					return err
				}
				fmt.Fprintf(stdout, "inquiry %s revision %d %s\n", in.GetId(), in.GetRevision(), in.GetStatus())
				return nil
			},
		})
	}
	release := state("release-inquiry", "release an inquiry to the banks of its sites",
		func(ctx context.Context, a brokerv1.BrokerAdminClient, id string) (*brokerv1.Inquiry, error) {
			return a.ReleaseInquiry(ctx, &brokerv1.ReleaseInquiryRequest{Id: id})
		})
	closeInq := state("close-inquiry", "close an inquiry: banks no longer see it; replies stay",
		func(ctx context.Context, a brokerv1.BrokerAdminClient, id string) (*brokerv1.Inquiry, error) {
			return a.CloseInquiry(ctx, &brokerv1.CloseInquiryRequest{Id: id})
		})
	var listStatus, listAuthor string
	list := t.Command(cmdutil.Admin{
		Name: "inquiries", Usage: "inquiries [-status DRAFT|RELEASED|CLOSED] [-author ID]", Help: "list inquiries, newest first",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&listStatus, "status", "", "only this status")
			fs.StringVar(&listAuthor, "author", "", "only this author")
		},
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			st := brokerv1.InquiryStatus_INQUIRY_STATUS_UNSPECIFIED
			if listStatus != "" {
				v, ok := brokerv1.InquiryStatus_value[strings.ToUpper(listStatus)]
				if !ok {
					return fmt.Errorf("%w: -status %q: want DRAFT, RELEASED or CLOSED", cmdutil.ErrUsage, listStatus)
				}
				st = brokerv1.InquiryStatus(v)
			}
			res, err := admin(cc).ListInquiries(ctx, &brokerv1.AdminListInquiriesRequest{Status: st, Author: listAuthor})
			if err != nil {
				return err
			}
			tw := cmdutil.Table(stdout, "ID\tREV\tSTATUS\tAUTHOR\tSITES\tEXPIRES\tLABEL")
			for _, in := range res.GetInquiries() {
				exp := "-"
				if in.GetExpiresAt() != nil {
					exp = in.GetExpiresAt().AsTime().Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", in.GetId(), in.GetRevision(), in.GetStatus(), in.GetAuthor(),
					strings.Join(in.GetTargetSites(), ","), exp, in.GetLabel())
			}
			return tw.Flush()
		},
	})
	get := t.Command(cmdutil.Admin{
		Name: "inquiry", Usage: "inquiry ID", Help: "show one inquiry as JSON",
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			id, err := t.One(args, "inquiry ID")
			if err != nil {
				return err
			}
			in, err := admin(cc).GetInquiry(ctx, &brokerv1.GetInquiryRequest{Id: id})
			if err != nil {
				return err
			}
			return printJSON(stdout, in)
		},
	})
	replies := t.Command(cmdutil.Admin{
		Name: "replies", Usage: "replies ID", Help: "the replies to an inquiry with per-site counts and their sum",
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			id, err := t.One(args, "replies ID")
			if err != nil {
				return err
			}
			res, err := admin(cc).ListReplies(ctx, &brokerv1.ListRepliesRequest{Id: id})
			if err != nil {
				return err
			}
			tw := cmdutil.Table(stdout, "SITE\tBANK\tCOUNT\tRECEIVED\tBODY")
			for _, r := range res.GetReplies() {
				count := "unreadable"
				if r.Count != nil {
					count = fmt.Sprint(r.GetCount())
				}
				if r.GetSuppressed() {
					// The operator sees what the small-count rule hides.
					count += fmt.Sprintf(" (researchers: < %d)", res.GetMinCount())
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", orDash(r.GetSiteId()), r.GetBankEmail(), count,
					r.GetReceivedAt().AsTime().Format(time.RFC3339), abbreviate(r.GetBody()))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, sc := range res.GetSites() {
				fmt.Fprintf(stdout, "site %s: %s from %d replies%s\n", orDash(sc.GetSiteId()),
					countText(sc.GetCount(), sc.GetReplies(), sc.GetUnreadable()), sc.GetReplies(), samplesText(sc.Samples))
			}
			fmt.Fprintf(stdout, "total: %s%s\n", countText(res.GetTotal(), int32(len(res.GetReplies())), res.GetUnreadable()), samplesText(res.Samples))
			if res.GetSuppressedSites() > 0 {
				fmt.Fprintf(stdout, "researchers see counts below %d as \"< %d\" and the sum of the counts shown (sites with a hidden count: %d)\n",
					res.GetMinCount(), res.GetMinCount(), res.GetSuppressedSites())
			}
			return nil
		},
	})
	var seedAuthor, seedSites string
	seed := t.Command(cmdutil.Admin{
		Name: "seed-demo", Usage: "seed-demo -author ID [-sites charite,dresden]",
		Help: "create and release the demo inquiry (with its expose PDF) unless the author has it already; prints its id",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&seedAuthor, "author", "", "the demo researcher's user id (required)")
			fs.StringVar(&seedSites, "sites", "charite,dresden", "target sites, comma-separated")
		},
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			a := admin(cc)
			have, err := a.ListInquiries(ctx, &brokerv1.AdminListInquiriesRequest{Author: seedAuthor})
			if err != nil {
				return err
			}
			for _, in := range have.GetInquiries() {
				if in.GetLabel() == demo.Label && in.GetStatus() != brokerv1.InquiryStatus_CLOSED {
					if in.GetStatus() == brokerv1.InquiryStatus_DRAFT {
						if _, err := a.ReleaseInquiry(ctx, &brokerv1.ReleaseInquiryRequest{Id: in.GetId()}); err != nil {
							return err
						}
					}
					fmt.Fprintln(stdout, in.GetId())
					return nil
				}
			}
			in, err := a.CreateInquiry(ctx, &brokerv1.CreateInquiryRequest{Author: seedAuthor, Content: demo.Content(cmdutil.SplitList(seedSites))})
			if err != nil {
				return err
			}
			if _, err := a.ReleaseInquiry(ctx, &brokerv1.ReleaseInquiryRequest{Id: in.GetId()}); err != nil {
				return err
			}
			fmt.Fprintln(stdout, in.GetId())
			return nil
		},
	})
	var monBank string
	monitor := t.Command(cmdutil.Admin{
		Name: "monitoring", Usage: "monitoring [-bank EMAIL]", Help: "the latest status report of every bank (or one): what its connector sent to /broker/rest/monitoring",
		Flags: func(fs *flag.FlagSet) { fs.StringVar(&monBank, "bank", "", "only this bank's report") },
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			res, err := admin(cc).ListMonitoring(ctx, &brokerv1.ListMonitoringRequest{BankEmail: monBank})
			if err != nil {
				return err
			}
			tw := cmdutil.Table(stdout, "BANK\tSITE\tRECEIVED\tPARAMETER\tEXIT\tSTATUS")
			for _, r := range res.GetReports() {
				if len(r.GetItems()) == 0 {
					fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t-\n", r.GetBankEmail(), orDash(r.GetSiteId()), r.GetReceivedAt().AsTime().Format(time.RFC3339))
				}
				for _, it := range r.GetItems() {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.GetBankEmail(), orDash(r.GetSiteId()), r.GetReceivedAt().AsTime().Format(time.RFC3339),
						it.GetParameterName(), orDash(it.GetExitStatus()), abbreviate(strings.Join(strings.Fields(it.GetStatusText()), " ")))
				}
			}
			return tw.Flush()
		},
	})
	// Every service's store is copied and put back the same way.
	bk, rs := backup.Commands(t, stdout)
	th, lt := throttles.Commands(t, stdout)
	subs := []*ffcli.Command{serve}
	subs = append(subs, siteCommands(t, stdout)...)
	subs = append(subs, banks, bankSite("approve-bank", "approve a bank and link it to its site", true),
		bankSite("link-bank", "link a bank to another site (its status stays)", false), deleteBank,
		create, update, release, closeInq, list, get, replies, seed, monitor, bk, rs, th, lt)
	return t.Root(subs...).ParseAndRun(ctx, args)
}

// contentFlags are an inquiry's content on the command line; texts that
// are documents come from files.
type contentFlags struct {
	label, description, queryFile, exposeFile, sites, searchFor, expires string
	contact                                                              brokerv1.Contact
}

func (f *contentFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.label, "label", "", "short title (required)")
	fs.StringVar(&f.description, "description", "", "what the researcher asks")
	fs.StringVar(&f.queryFile, "query", "", "file with the query XML (Samply query language; required)")
	fs.StringVar(&f.exposeFile, "expose", "", "file with the expose PDF")
	fs.StringVar(&f.sites, "sites", "", "target sites, comma-separated (required)")
	fs.StringVar(&f.searchFor, "search-for", "", "what is counted, comma-separated, in the words connectors recognise (Patienten, Biomaterial, Klinische Daten)")
	fs.StringVar(&f.expires, "expires", "", "expiry: a duration from now (720h) or an RFC 3339 time (empty: none)")
	fs.StringVar(&f.contact.Title, "contact-title", "", "contact's title")
	fs.StringVar(&f.contact.Firstname, "contact-firstname", "", "contact's first name")
	fs.StringVar(&f.contact.Lastname, "contact-lastname", "", "contact's last name (required)")
	fs.StringVar(&f.contact.Email, "contact-email", "", "contact's email")
	fs.StringVar(&f.contact.Phone, "contact-phone", "", "contact's phone")
	fs.StringVar(&f.contact.Organization, "contact-organization", "", "contact's organization")
}

func (f *contentFlags) content() (*brokerv1.InquiryContent, error) {
	if f.queryFile == "" {
		return nil, fmt.Errorf("%w: -query FILE is required", cmdutil.ErrUsage)
	}
	q, err := os.ReadFile(f.queryFile)
	if err != nil {
		return nil, err
	}
	c := &brokerv1.InquiryContent{
		Label: f.label, Description: f.description, Query: string(q),
		Contact: &brokerv1.Contact{Title: f.contact.Title, Firstname: f.contact.Firstname, Lastname: f.contact.Lastname,
			Email: f.contact.Email, Phone: f.contact.Phone, Organization: f.contact.Organization},
		TargetSites: cmdutil.SplitList(f.sites), SearchFor: cmdutil.SplitList(f.searchFor),
	}
	if f.exposeFile != "" {
		if c.ExposePdf, err = os.ReadFile(f.exposeFile); err != nil {
			return nil, err
		}
		c.ExposeFilename = filepath.Base(f.exposeFile)
	}
	if f.expires != "" {
		if d, err := time.ParseDuration(f.expires); err == nil {
			c.ExpiresAt = timestamppb.New(time.Now().Add(d))
		} else if at, err := time.Parse(time.RFC3339, f.expires); err == nil {
			c.ExpiresAt = timestamppb.New(at)
		} else {
			return nil, fmt.Errorf("%w: -expires %q: want a duration or an RFC 3339 time", cmdutil.ErrUsage, f.expires)
		}
	}
	return c, nil
}

func printJSON(w io.Writer, in *brokerv1.Inquiry) error {
	b, err := protojson.MarshalOptions{Multiline: true, UseProtoNames: true}.Marshal(in)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func abbreviate(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// countText is a summed count that says how many replies had none: a sum
// of nothing but unreadable replies is not 0.
func countText(count, replies, unreadable int32) string {
	switch {
	case unreadable == 0:
		return fmt.Sprint(count)
	case unreadable == replies:
		return "unreadable"
	default:
		return fmt.Sprintf("%d (%d unreadable)", count, unreadable)
	}
}

func samplesText(samples *int32) string {
	if samples == nil {
		return ""
	}
	return fmt.Sprintf(", %d samples", *samples)
}
