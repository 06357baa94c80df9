package throttles

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
	"google.golang.org/grpc"

	"fris.dev/pkg/cmdutil"
	ratelimitv1 "fris.dev/proto/ratelimit/v1"
)

// Commands are the `throttles` and `lift-throttle` subcommands of t's
// binary, whose service registers ThrottleAdmin. They print to stdout.
func Commands(t cmdutil.Tool, stdout io.Writer) (list, lift *ffcli.Command) {
	var max int
	list = t.Command(cmdutil.Admin{
		Name: "throttles", Usage: "throttles [-max N]",
		Help: "list the accounts, clients and addresses the abuse limits slow now, the longest-running first",
		Flags: func(fs *flag.FlagSet) {
			fs.IntVar(&max, "max", 0, "at most this many (0: 500)")
		},
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("%w: %s throttles [-max N]", cmdutil.ErrUsage, t.Name)
			}
			res, err := ratelimitv1.NewThrottleAdminClient(cc).ListThrottles(ctx, &ratelimitv1.ListThrottlesRequest{PageSize: int32(max)})
			if err != nil {
				return err
			}
			tw := cmdutil.Table(stdout, "ID\tFLOW\tKIND\tACCOUNT\tADDRESS\tFAILURES\tREFUSED\tUNTIL")
			for _, th := range res.GetThrottles() {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", th.GetId(), th.GetFlow(), th.GetKind(), dash(th.GetAccount()), dash(th.GetAddr()),
					th.GetFailures(), th.GetRefused(), th.GetUntil().AsTime().UTC().Format(time.RFC3339))
			}
			return tw.Flush()
		},
	})
	lift = t.Command(cmdutil.Admin{
		Name: "lift-throttle", Usage: "lift-throttle ID",
		Help: "forget what the abuse limits counted against ID (as `throttles` lists it): its next attempt is admitted at once",
		Run: func(ctx context.Context, cc *grpc.ClientConn, args []string) error {
			id, err := t.One(args, "lift-throttle ID")
			if err != nil {
				return err
			}
			res, err := ratelimitv1.NewThrottleAdminClient(cc).LiftThrottle(ctx, &ratelimitv1.LiftThrottleRequest{Id: id})
			if err != nil {
				return err
			}
			if !res.GetLifted() {
				fmt.Fprintf(stdout, "%s holds nothing: its throttle had ended\n", id)
				return nil
			}
			fmt.Fprintf(stdout, "lifted %s\n", id)
			return nil
		},
	})
	return list, lift
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
