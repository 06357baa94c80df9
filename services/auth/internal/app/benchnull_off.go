//go:build !fris_bench_null

package app

import "flag"

// registerBenchFlags: a build for deployment has no stub signer, so no
// flag to ask for one (benchnull_on.go is the benchmark's build).
func registerBenchFlags(*flag.FlagSet, *Keys) {}

func validateBench(*Keys) error { return nil }
