//go:build fris_bench_null

package app

import (
	"errors"
	"flag"
	"os"
)

// BenchNullEnv must hold BenchNullAck for -bench-null-signer to be taken:
// a second lock beside the build tag, so a benchmark binary started by
// mistake with the flag from somewhere else still refuses.
const (
	BenchNullEnv = "FRIS_AUTH_BENCH_NULL_SIGNER"
	BenchNullAck = "unverifiable-tokens"
)

// registerBenchFlags adds the benchmark build's -bench-null-signer.
func registerBenchFlags(fs *flag.FlagSet, c *Keys) {
	fs.StringVar(&c.BenchNullSigner, "bench-null-signer", "", "BENCHMARK BUILD ONLY: the client whose access and id tokens are signed by a stub (HS256 under a random key, a kid nothing knows): no reader accepts them; needs "+BenchNullEnv+"="+BenchNullAck)
}

func validateBench(c *Keys) error {
	if c.BenchNullSigner != "" && os.Getenv(BenchNullEnv) != BenchNullAck {
		return errors.New("-bench-null-signer needs " + BenchNullEnv + "=" + BenchNullAck + ": it is for the benchmark alone")
	}
	return nil
}
