# Builds stamp version, revision and branch into prometheus/common/version,
# exactly as the Dockerfile does.

VERSION    := $(shell cat VERSION)
REVISION   := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BRANCH     := $(shell git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)
BUILD_USER ?= $(shell whoami)@$(shell hostname)
BUILD_DATE := $(shell date -u +%Y%m%d-%H:%M:%S)
VERSION_PKG := github.com/prometheus/common/version
LDFLAGS := -s -w \
	-X $(VERSION_PKG).Version=$(VERSION) \
	-X $(VERSION_PKG).Revision=$(REVISION) \
	-X $(VERSION_PKG).Branch=$(BRANCH) \
	-X $(VERSION_PKG).BuildUser=$(BUILD_USER) \
	-X $(VERSION_PKG).BuildDate=$(BUILD_DATE)

GOLANGCI_LINT_VERSION := v2.15.0
# Pinned, like the go-jsonnet library in go.mod that the tests render with.
JSONNET_VERSION := v0.21.0
JSONNET := $(shell go env GOPATH)/bin/jsonnet
GREMLINS_VERSION := v0.6.0
GREMLINS := $(shell go env GOPATH)/bin/gremlins
GOLANGCI_LINT := $(shell go env GOPATH)/bin/golangci-lint
IMAGE ?= global-stability-exporter

.PHONY: build test lint bench docker clean mixin mutation chart-tools chart-test

build:
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o global_stability_exporter .

test:
	@for tool in prometheus promtool; do command -v $$tool >/dev/null || \
	  echo "*** $$tool not found: the end-to-end test and the promtool checks will be SKIPPED (Debian: apt-get install prometheus) ***" >&2; done
	go test -race ./...

$(JSONNET):
	GOFLAGS= go install github.com/google/go-jsonnet/cmd/jsonnet@$(JSONNET_VERSION)

# Renders the dashboards, the rules and the PrometheusRule from mixin/.
# mixin/mixin_test.go fails while the committed files differ from this.
mixin: $(JSONNET)
	$(JSONNET) -S -c -m . mixin/render.jsonnet

$(GOLANGCI_LINT):
	GOFLAGS= go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

lint: $(GOLANGCI_LINT)
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	go vet ./...
	$(GOLANGCI_LINT) run ./...

bench:
	go test -run '^$$' -bench . -benchmem ./...

$(GREMLINS):
	GOFLAGS= go install github.com/go-gremlins/gremlins/cmd/gremlins@$(GREMLINS_VERSION)

# Mutation testing of client/ and collector/ with the tests' -short mode
# (GOFLAGS reaches the go test that gremlins runs per mutant). Slow (about
# an hour on 2 cores), so not in CI: run it before a release and record
# the summary in bench/MUTATION.md. Fails below 85% efficacy.
mutation: $(GREMLINS)
	@mkdir -p .build
	set -e; for pkg in client collector; do \
	  GOFLAGS=-short $(GREMLINS) unleash --workers 2 --timeout-coefficient 4 --threshold-efficacy 85 \
	    -o .build/mutation-$$pkg.json ./$$pkg | tee .build/mutation-$$pkg.txt; \
	done

# The Helm chart and the kustomize example are proven by charts/test, a Go
# module of its own (the Kubernetes API types stay out of the exporter's
# go.mod), with helm and kustomize installed at pinned versions. (kustomize
# v5.8.1: later ones need a newer Go than this project's.)
HELM_VERSION := v3.22.0
KUSTOMIZE_VERSION := v5.8.1
HELM := $(shell go env GOPATH)/bin/helm
KUSTOMIZE := $(shell go env GOPATH)/bin/kustomize

$(HELM):
	GOFLAGS= go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

$(KUSTOMIZE):
	GOFLAGS= go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)

chart-tools: $(HELM) $(KUSTOMIZE)

chart-test: chart-tools
	cd charts/test && go vet ./... && PATH="$(dir $(HELM)):$$PATH" go test -race -count=1 ./...

docker:
	docker build --build-arg REVISION=$(REVISION) --build-arg BRANCH=$(BRANCH) \
	  -t $(IMAGE):$(VERSION) -t $(IMAGE):latest .

clean:
	rm -f global_stability_exporter
