package flagdoc

import (
	"flag"
	"strings"
	"testing"
	"time"
)

const readme = "# FRIS\n\n### Configuration\n\n" +
	"| service | flag | default | meaning |\n|---|---|---|---|\n" +
	"| all services, gateway | `-log-level` | `info` | level |\n" +
	"| all services | `-grpc-addr` / `-ops-addr` | mdr: `:9102` / `:9202` | ports |\n" +
	"| all services | `-batch-delay` | `1ms` (upload: `2ms`) | group commit |\n" +
	"| gateway | `-max-body` / `-ttl` | `10` / `168h` | a \\| b |\n" +
	"| gateway | `-secret-file` / `-key-file` | empty | files |\n" +
	"| auth | `-limit-*` | see `docs/security.md` | limits |\n" +
	"\n### Observability\n\n| gateway | `-not-a-flag` | `x` | outside the section |\n"

func docs(t *testing.T) Docs {
	t.Helper()
	rows, err := Read(strings.NewReader(readme))
	if err != nil {
		t.Fatal(err)
	}
	return Docs{Rows: rows, Security: "Set `-tls-ca FILE` to ..."}
}

func gateway(maxBody int64) *flag.FlagSet {
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	fs.String("log-level", "info", "")
	fs.Int64("max-body", maxBody, "")
	fs.Duration("ttl", 7*24*time.Hour, "")
	fs.String("secret-file", "", "")
	fs.String("key-file", "", "")
	fs.String("tls-ca", "", "")
	return fs
}

func TestCheckPasses(t *testing.T) {
	d := docs(t)
	if errs := d.Check("gateway", gateway(10), []string{"tls-ca"}); len(errs) != 0 {
		t.Fatal(errs)
	}
	for _, svc := range []struct {
		name, batch, grpc, ops string
	}{{"mdr", "1ms", ":9102", ":9202"}, {"upload", "2ms", ":1", ":2"}} {
		fs := flag.NewFlagSet(svc.name+" serve", flag.ContinueOnError)
		fs.String("log-level", "info", "")
		fs.String("grpc-addr", svc.grpc, "")
		fs.String("ops-addr", svc.ops, "")
		fs.String("batch-delay", svc.batch, "")
		if errs := d.Check(svc.name, fs, nil); len(errs) != 0 {
			t.Fatal(svc.name, errs)
		}
	}
}

func TestCheckFails(t *testing.T) {
	d := docs(t)
	for name, tc := range map[string]struct {
		component string
		fs        func() *flag.FlagSet
		elsewhere []string
		want      string
	}{
		"wrong default": {"gateway", func() *flag.FlagSet { return gateway(11) }, []string{"tls-ca"}, `-max-body: the table says default "10", the flag's is "11"`},
		"flag missing": {"gateway", func() *flag.FlagSet {
			fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
			fs.String("log-level", "info", "")
			return fs
		}, nil, "gateway has no flag -max-body"},
		"undocumented flag": {"gateway", func() *flag.FlagSet {
			fs := gateway(10)
			fs.Int("new-limit", 1, "")
			return fs
		}, []string{"tls-ca"}, "gateway -new-limit is documented neither"},
		"listed, not described": {"gateway", func() *flag.FlagSet { return gateway(10) }, []string{"tls-ca", "key-file"}, "docs/security.md does not describe gateway's -key-file"},
		"listed, in the table":  {"gateway", func() *flag.FlagSet { return gateway(10) }, []string{"tls-ca", "log-level"}, "-log-level is in README.md's table"},
		"per-service default": {"mdr", func() *flag.FlagSet {
			fs := flag.NewFlagSet("mdr serve", flag.ContinueOnError)
			for _, n := range []string{"log-level", "grpc-addr", "ops-addr", "batch-delay"} {
				fs.String(n, "", "")
			}
			return fs
		}, nil, `mdr -grpc-addr: the table says default ":9102"`},
		"no flag for a wildcard": {"auth", func() *flag.FlagSet {
			fs := flag.NewFlagSet("auth serve", flag.ContinueOnError)
			for _, n := range []string{"log-level", "grpc-addr", "ops-addr", "batch-delay"} {
				fs.String(n, "", "")
			}
			return fs
		}, nil, "auth has no flag -limit-*"},
	} {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, err := range d.Check(tc.component, tc.fs(), tc.elsewhere) {
				got = append(got, err.Error())
			}
			if !strings.Contains(strings.Join(got, "\n"), tc.want) {
				t.Fatalf("errors %q, want one with %q", got, tc.want)
			}
		})
	}
}

func TestReadRefusesWhatItCannotCheck(t *testing.T) {
	for _, row := range []string{
		"| gatewy | `-addr` | `x` | typo |",
		"| gateway | addr | `x` | no flag |",
		"| gateway | `-a` / `-b` / `-c` | `1` / `2` | too few defaults |",
		"| gateway | `-a` | maybe | unreadable default |",
		"| gateway | `-a` | `1` |",
	} {
		if _, err := Read(strings.NewReader("### Configuration\n" + row + "\n")); err == nil {
			t.Errorf("%s: read", row)
		}
	}
	if _, err := Read(strings.NewReader("# no table\n")); err == nil {
		t.Error("a README without the table read")
	}
}

// The repository's own table names only known components and reads
// whole; the components' tests check its flags.
func TestRepositoryTable(t *testing.T) {
	d, err := Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Rows) < 40 {
		t.Fatalf("%d rows", len(d.Rows))
	}
}
