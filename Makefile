# FRIS developer commands. `make help` lists them.
SHELL := /usr/bin/env bash
.DEFAULT_GOAL := help

BIN        := $(CURDIR)/bin
# Every service module under services/ and every API under proto/<svc>/v1.
SERVICES   := $(patsubst services/%/cmd,%,$(wildcard services/*/cmd))
PROTO_SVCS := $(patsubst proto/%/v1,%,$(wildcard proto/*/v1))
MODULES     = $(shell go list -m -f '{{.Dir}}')

# Pinned code generators, installed into bin/ from the Go module proxy.
BUF_VERSION          := v1.75.0
PROTOC_GEN_GO        := v1.36.12
PROTOC_GEN_GO_GRPC   := v1.6.2
PROTOC_GEN_GATEWAY   := v2.32.0

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

.PHONY: tools
tools: ## install the pinned code generators into bin/
	GOBIN=$(BIN) go install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
	GOBIN=$(BIN) go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO)
	GOBIN=$(BIN) go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC)
	GOBIN=$(BIN) go install github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway@$(PROTOC_GEN_GATEWAY)
	GOBIN=$(BIN) go install github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-openapiv2@$(PROTOC_GEN_GATEWAY)

$(BIN)/buf $(BIN)/protoc-gen-openapiv2:
	$(MAKE) tools

.PHONY: proto
proto: $(BIN)/buf $(BIN)/protoc-gen-openapiv2 ## regenerate the gRPC and gateway code under proto/, then the API reference
	cd proto && $(BIN)/buf generate $(addprefix --path ,$(PROTO_SVCS))
	$(MAKE) apidoc

.PHONY: apidoc
apidoc: ## merge proto/openapi and gateway/internal/apidoc/api.yaml into the served OpenAPI document
	cd tools && go run ./apidoc

.PHONY: proto-verify
proto-verify: $(BIN)/buf $(BIN)/protoc-gen-openapiv2 ## fail when the committed generated code is stale
	@tmp=$$(mktemp -d) && trap 'rm -rf $$tmp' EXIT && \
	cp -r proto/. $$tmp/ && \
	(cd $$tmp && sed -i 's#\.\./bin/#$(BIN)/#' buf.gen.yaml && $(BIN)/buf generate $(addprefix --path ,$(PROTO_SVCS))) && \
	if diff -r -q -x buf.gen.yaml proto $$tmp >/dev/null; then echo "generated code is up to date"; \
	else diff -r -x buf.gen.yaml proto $$tmp | head -40; echo "generated code is stale: run make proto"; exit 1; fi

.PHONY: build
build: ## build every binary into bin/, printing each step (a cold cache takes minutes)
	@deploy/local/build.sh $(BIN) $(foreach s,$(SERVICES),./services/$(s)/cmd/$(s)) ./gateway/cmd/gateway ./gateway/cmd/fris-certs

.PHONY: run
run: build ## start every service and the gateway on the embedded store, with demo data
	deploy/local/run.sh

.PHONY: test
test: ## run every test of every module with -race (starts a throwaway Redis unless REDIS_URL is set)
	deploy/local/test.sh

.PHONY: compose-test
compose-test: ## run the platform team's path with podman: images, compose up, walkthroughs, upgrade, restart, rotation, backup and restore (deploy/README.md)
	deploy/local/compose-test.sh

.PHONY: compat
compat: ## run only the client compatibility suite (the deployed clients' exact requests, real OIDC libraries; Redis variants need REDIS_URL)
	go test -count=1 -run '^TestCompat' -v ./e2e

.PHONY: k8s-check
k8s-check: ## render deploy/k8s with kustomize (no cluster, no network) and check every object strictly (make test runs it too)
	cd tools && go test -count=1 ./k8scheck

.PHONY: buildkit-check
buildkit-check: ## build the five images from deploy/Dockerfile with Docker BuildKit and run them (root, podman; the first run builds BuildKit: 5-20 min, then 15-30 s)
	deploy/local/buildkit-check.sh

.PHONY: bench
bench: build ## run the load benchmarks (see BENCHMARKS.md)
	deploy/local/bench.sh

.PHONY: hydra-compare
hydra-compare: build ## FRIS next to Ory Hydra on Postgres, interleaved rounds (tools/hydra-compare/README.md; builds Hydra once, 10-20 min; not in make test)
	tools/hydra-compare/run.sh

.PHONY: vet
vet: ## go vet every module
	go vet $(addsuffix /...,$(MODULES))

.PHONY: fmt
fmt: ## gofmt every Go file
	gofmt -l -w $(MODULES)

.PHONY: clean
clean: ## remove binaries and the local data directory
	rm -rf $(BIN) .fris
