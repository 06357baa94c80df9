// Command apidoc writes gateway/internal/apidoc/openapi.json from the
// generated OpenAPI 2 document and the written part. Run from the tools
// module: `go run ./apidoc` (make proto and make apidoc do). It lives here,
// not in the gateway, so the gateway module links only what it serves.
package main

import (
	"fmt"
	"os"

	"fris.dev/tools/apidoc/build"
)

// The sources and the result, relative to the tools module.
const (
	generated = "../proto/openapi/fris.swagger.json"
	written   = "../gateway/internal/apidoc/api.yaml"
	out       = "../gateway/internal/apidoc/openapi.json"
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
