# Builds stamp version, revision, branch, user and date into
# prometheus/common/version, as the Dockerfile and .goreleaser.yaml do.

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
# goreleaser, not promu (what the official exporters use), until the build
# moves to promu and Makefile.common on adoption.
GORELEASER_VERSION := v2.15.1
GORELEASER := $(shell go env GOPATH)/bin/goreleaser
IMAGE ?= global-stability-exporter

.PHONY: build test lint bench docker clean mixin mutation chart-tools chart-test release release-check

build:
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o global_stability_exporter .

test:
	@for tool in prometheus promtool prometheus-alertmanager amtool; do command -v $$tool >/dev/null || \
	  echo "*** $$tool not found: the end-to-end tests and the promtool/amtool checks will be SKIPPED (Debian: apt-get install prometheus prometheus-alertmanager) ***" >&2; done
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
	go mod tidy -diff
	cd bench/scanners && go mod tidy -diff
	go vet ./...
	$(GOLANGCI_LINT) run ./...

bench:
	go test -run '^$$' -bench . -benchmem ./...

$(GREMLINS):
	GOFLAGS= go install github.com/go-gremlins/gremlins/cmd/gremlins@$(GREMLINS_VERSION)

# Mutation testing of client/, endpoint/ and collector/ with the tests' -short mode
# (GOFLAGS reaches the go test that gremlins runs per mutant). Slow (a
# test run per mutant), so not in CI: run it before a release; each
# package's report is in .build/. Fails below 85% efficacy.
mutation: $(GREMLINS)
	@mkdir -p .build
	failed=; for pkg in client endpoint collector; do \
	  GOFLAGS=-short $(GREMLINS) unleash --workers 2 --timeout-coefficient 4 --threshold-efficacy 85 \
	    -o .build/mutation-$$pkg.json ./$$pkg > .build/mutation-$$pkg.txt 2>&1 || failed="$$failed $$pkg"; \
	  cat .build/mutation-$$pkg.txt; \
	done; \
	if [ -n "$$failed" ]; then echo "mutation: below 85% efficacy (or failed):$$failed"; exit 1; fi

# The Helm chart and the kustomize example are proven by charts/test, a Go
# module of its own (the Kubernetes API types stay out of the exporter's
# go.mod), with helm and kustomize installed at pinned versions (and jsonnet:
# the chart's NOTES print a jsonnet command, which the tests run). (kustomize
# v5.8.1: later ones need a newer Go than this project's.)
HELM_VERSION := v3.22.0
KUSTOMIZE_VERSION := v5.8.1
HELM := $(shell go env GOPATH)/bin/helm
KUSTOMIZE := $(shell go env GOPATH)/bin/kustomize

$(HELM):
	GOFLAGS= go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

$(KUSTOMIZE):
	GOFLAGS= go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)

chart-tools: $(HELM) $(KUSTOMIZE) $(JSONNET)

chart-test: chart-tools
	cd charts/test && go vet ./... && PATH="$(dir $(HELM)):$$PATH" go test -race -count=1 ./...

$(GORELEASER):
	GOFLAGS= go install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)

# Release archives (.goreleaser.yaml) are built from a fresh clone of HEAD,
# so that they are the commit's and nothing else: uncommitted changes stay
# out, the clone has the remote that goreleaser asks for (without one it
# silently stamps revision "none" and build date 0001-01-01), and the commit
# gives every date. The clone is on this branch, for the Branch stamp.
RELEASE_WORK := .build/release
RELEASE_DIR := global_stability_exporter-$(VERSION).linux-amd64

define warn_if_dirty
	@if [ -n "$$(git status --porcelain)" ]; then \
	  echo "*** uncommitted changes are not in the archives: they are built from HEAD ($(REVISION)) ***" >&2; fi
endef

# $(call goreleaser_in_clone,DIR,ENV): goreleaser in a fresh clone of HEAD at DIR.
define goreleaser_in_clone
	rm -rf $(1) && git clone --quiet --no-checkout . $(1)
	git -C $(1) checkout --quiet $(if $(filter HEAD,$(BRANCH)),--detach $(REVISION),-B $(BRANCH) $(REVISION))
	cd $(1) && $(2) $(GORELEASER) release --snapshot --clean
endef

# All archives and sha256sums.txt, in dist/.
release: $(GORELEASER)
	$(warn_if_dirty)
	$(call goreleaser_in_clone,$(RELEASE_WORK)/all,)
	rm -rf dist && mv $(RELEASE_WORK)/all/dist dist && rm -rf $(RELEASE_WORK)/all
	@cat dist/sha256sums.txt

# The linux/amd64 archive (RELEASE_CHECK selects it in .goreleaser.yaml),
# built twice in clones at two paths: the archives and binaries must be the
# same bytes. Then the checks a downloader makes: the sums, the files in the
# archive, --version showing this VERSION and commit. Leaves it in dist/.
release-check: $(GORELEASER)
	$(warn_if_dirty)
	$(call goreleaser_in_clone,$(RELEASE_WORK)/a,RELEASE_CHECK=1)
	$(call goreleaser_in_clone,$(RELEASE_WORK)/b,RELEASE_CHECK=1)
	test "$$(cd $(RELEASE_WORK)/a/dist && ls *.tar.gz *.zip 2>/dev/null)" = "$(RELEASE_DIR).tar.gz"
	cmp $(RELEASE_WORK)/a/dist/$(RELEASE_DIR).tar.gz $(RELEASE_WORK)/b/dist/$(RELEASE_DIR).tar.gz
	cmp $(RELEASE_WORK)/a/dist/check_linux_amd64_v1/global_stability_exporter \
	  $(RELEASE_WORK)/b/dist/check_linux_amd64_v1/global_stability_exporter
	cmp $(RELEASE_WORK)/a/dist/sha256sums.txt $(RELEASE_WORK)/b/dist/sha256sums.txt
	rm -rf dist && mv $(RELEASE_WORK)/a/dist dist && rm -rf $(RELEASE_WORK)/a $(RELEASE_WORK)/b
	cd dist && sha256sum -c sha256sums.txt
	mkdir -p $(RELEASE_WORK)/x && tar xzf dist/$(RELEASE_DIR).tar.gz -C $(RELEASE_WORK)/x
	cd $(RELEASE_WORK)/x/$(RELEASE_DIR) && for f in LICENSE NOTICE README.md global_stability_exporter \
	  alerts/global_stability.rules.yml alerts/global_stability.rules.test.yml dashboards/global-stability-overview.json \
	  docs/runbooks.md docs/configuration.md examples/prometheus.yml examples/systemd/global_stability_exporter.service examples/kubernetes/kustomization.yaml; do \
	  test -f $$f || { echo "$(RELEASE_DIR).tar.gz lacks $$f" >&2; exit 1; }; done
	@out=$$($(RELEASE_WORK)/x/$(RELEASE_DIR)/global_stability_exporter --version 2>&1); echo "$$out"; \
	  echo "$$out" | grep -q "version $(VERSION) .*revision: $(REVISION))" || \
	    { echo "--version does not show version $(VERSION) and revision $(REVISION)" >&2; exit 1; }; \
	  ! echo "$$out" | grep -q "build date: *00010101" || { echo "no build date stamped" >&2; exit 1; }
	rm -rf $(RELEASE_WORK)/x

docker:
	docker build --build-arg REVISION=$(REVISION) --build-arg BRANCH=$(BRANCH) \
	  -t $(IMAGE):$(VERSION) -t $(IMAGE):latest .

clean:
	rm -rf global_stability_exporter dist $(RELEASE_WORK)
