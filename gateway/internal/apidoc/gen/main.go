// Command gen writes gateway/internal/apidoc/openapi.json from the
// generated OpenAPI 2 document and the written part. Run from the gateway
// module: `go run ./internal/apidoc/gen` (make proto and make apidoc do).
package main

import (
	"fmt"
	"os"

	"fris.dev/gateway/internal/apidoc/build"
)

// The sources and the result, relative to the gateway module.
const (
	generated = "../proto/openapi/fris.swagger.json"
	written   = "internal/apidoc/api.yaml"
	out       = "internal/apidoc/openapi.json"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "apidoc:", err)
		os.Exit(1)
	}
}

func run() error {
	g, err := os.ReadFile(generated)
	if err != nil {
		return err
	}
	w, err := os.ReadFile(written)
	if err != nil {
		return err
	}
	doc, err := build.Build(g, w)
	if err != nil {
		return err
	}
	return os.WriteFile(out, doc, 0o644)
}
