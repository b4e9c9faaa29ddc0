# credo — make help lists the targets.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

# Tools are installed into bin/ at pinned versions.
BIN ?= $(CURDIR)/bin
CONTROLLER_GEN_VERSION ?= v0.23.0
CONTROLLER_GEN ?= $(BIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
GOLANGCI_LINT_VERSION ?= v2.15.0
# golangci-lint with kube-api-linter compiled in, from a wrapper module that pins both (the
# linter has no releases, only pseudo-versions): see hack/tools/kube-api-linter/main.go. The
# one binary runs both configurations (.golangci.yml and .golangci-kal.yml): a second,
# plain golangci-lint of the same version would only cost a cold run its build.
KAL_MOD := hack/tools/kube-api-linter
KAL_VERSION := $(shell awk '$$1 == "sigs.k8s.io/kube-api-linter" {print $$2}' $(KAL_MOD)/go.mod)
KUBE_API_LINTER ?= $(BIN)/golangci-lint-kube-api-linter-$(GOLANGCI_LINT_VERSION)-$(KAL_VERSION)
GOLANGCI_LINT ?= $(KUBE_API_LINTER)

# Every go command here compiles as the shipped binaries are compiled (static, paths
# trimmed; internal/publish): vet, the tests, make build and the node's release image then
# share one build cache, and a cold run compiles each package once, not once per flag set
# (-ldflags only change the link).
export CGO_ENABLED := 0
export GOFLAGS := -trimpath $(GOFLAGS)

# The from-source control plane (hack/build-control-plane.sh) lives outside the clone.
K8S_VERSION ?= v1.37.2
KUBEBUILDER_ASSETS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/credo/k8s/$(K8S_VERSION)
export KUBEBUILDER_ASSETS K8S_VERSION

GO_TEST_FLAGS ?= -count=1
BENCH ?= .

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-17s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# What --version prints and credo_build_info labels (internal/version): the release, and the
# commit, stamped because the go command records none in a linked git worktree
# (golang/go#58218) or with -buildvcs=false. A new commit only re-links the binaries.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT ?= $(shell c=$$(git rev-parse HEAD 2>/dev/null) && { test -z "$$(git status --porcelain --untracked-files=no)" || c=$$c-dirty; echo $$c; })
VERSION_PKG := github.com/credo-dev/credo/internal/version
LDFLAGS := -s -w -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).commit=$(COMMIT)

.PHONY: build
# As the release builds them (internal/publish), so that tests and benchmarks run (and
# measure) the binaries that ship: static, paths trimmed, no symbol table.
build: ## Build every binary into bin/, as the image does.
	@hack/progress.sh "credo's binaries" go build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...

# A release (docs/development.md#cutting-a-release): the image index for linux/amd64 and
# linux/arm64, the SBOMs, config/ as a Flux OCI artifact, the Helm chart, and cosign
# signatures of all of them, in the OCI layout $(RELEASE_DIR)/oci; offline, no container
# engine. RELEASE_KEY signs (made once, kept in dist/, when it does not exist; the release
# workflow brings the project's key); its public key is $(RELEASE_DIR)/cosign.pub.
RELEASE_DIR ?= dist/$(VERSION)
RELEASE_KEY ?= dist/credo-release.key
.PHONY: release
release: ## Build a release into dist/<VERSION> (VERSION=v0.1.0; RELEASE_KEY signs).
	@test -f $(RELEASE_KEY) || { echo "release: no signing key at $(RELEASE_KEY): making one (keep it; publish its .pub)"; \
		go run ./hack/release keygen --out $(RELEASE_KEY); }
	go run ./hack/release build --version $(VERSION) --out $(RELEASE_DIR) --key $(RELEASE_KEY)

.PHONY: test
test: control-plane flux cert-manager manifests generate fmt vet build ## Unit and integration tests on the real control plane (tests/flux runs the built binaries, tests/certmanager cert-manager).
	# tests/release cross-compiles the release image for linux/arm64 from a
	# cold cache, beside the other packages: longer than go test's default
	# 10 minutes on a 2-core machine.
	go test $(GO_TEST_FLAGS) -timeout 20m ./...
	cd api && go test $(GO_TEST_FLAGS) ./...

.PHONY: test-e2e
test-e2e: control-plane flux manifests build ## End-to-end tests (E2E_KUBECONFIG=<file> for an existing cluster).
	go test $(GO_TEST_FLAGS) -tags e2e -timeout 20m ./tests/e2e/...

.PHONY: test-monitoring
test-monitoring: control-plane ## Run kube-state-metrics (built once from the module proxy) on config/monitoring against the control plane.
	@hack/build-kube-state-metrics.sh >/dev/null
	CREDO_KSM="$$(hack/build-kube-state-metrics.sh)" go test $(GO_TEST_FLAGS) -tags monitoring -timeout 10m ./tests/monitoring/...

.PHONY: node
node: control-plane ## Install containerd, runc and the CNI plugins (Debian), build kubelet, kube-scheduler and kube-proxy (cached) and bin/credo-node.
	@hack/node/install.sh
	@hack/build-control-plane.sh node >/dev/null
	@go build -o $(BIN)/credo-node ./tests/node/run

# The release the node runs: built as make release builds it, for this machine's platform
# only, signed with a throwaway key, from the work tree as it is.
E2E_RELEASE ?= $(BIN)/e2e-release
.PHONY: e2e-release
e2e-release:
	@test -f $(BIN)/e2e-release.key || go run ./hack/release keygen --out $(BIN)/e2e-release.key
	go run ./hack/release build --version v0.0.0-e2e --out $(E2E_RELEASE) --key $(BIN)/e2e-release.key \
		--platforms linux/$$(go env GOARCH) --allow-dirty >/dev/null

.PHONY: test-node
test-node: node e2e-release ## The node itself (tests/node; root, hack/node/install.sh's packages): containerd, kubelet, Services, in-cluster clients, the release image.
	CREDO_NODE_RELEASE=$(E2E_RELEASE)/oci go test $(GO_TEST_FLAGS) -tags node -timeout 15m ./tests/node/...

.PHONY: test-e2e-node
test-e2e-node: node e2e-release ## hack/ci/e2e.sh on a real node (root): credo installed from config/ in pods of the release image.
	$(BIN)/credo-node --release $(E2E_RELEASE)/oci -- hack/ci/e2e.sh

# A built binary, exec'd rather than `go run` (which exits 1 on SIGINT whatever its child
# did): Ctrl-C reaches tests/dev (or bin/credo-node) itself, which stops everything and exits 0.
# NODE=1 runs credo as a cluster does instead: the release image in pods on the real node of
# tests/node (root; slower to start), installed from config/ by hack/ci/install.sh.
.PHONY: dev
dev: control-plane manifests build $(if $(NODE),node e2e-release,flux) ## Run the whole system locally: control plane, CRDs, controllers, samples (NODE=1: in pods on a real node).
ifeq ($(NODE),)
	@go build -o $(BIN)/credo-dev ./tests/dev
	@exec $(BIN)/credo-dev
else
	@exec $(BIN)/credo-node --release $(E2E_RELEASE)/oci --kubeconfig $(BIN)/node.kubeconfig --wait -- hack/node/dev.sh
endif

.PHONY: control-plane
control-plane: ## Build etcd, kube-apiserver, kube-controller-manager and kubectl from source (cached); link kubectl into bin/.
	@mkdir -p $(BIN) && ln -sfn "$$(hack/build-control-plane.sh)/kubectl" $(BIN)/kubectl

.PHONY: flux
flux: ## Build source-, helm-, kustomize- and notification-controller and the flux CLI from source (cached); link flux into bin/.
	@mkdir -p $(BIN) && ln -sfn "$$(hack/build-flux.sh)/flux" $(BIN)/flux

.PHONY: cert-manager
cert-manager: ## Build cert-manager's controllers (CA and self-signed issuers, approver) and copy its CRDs, from source (cached).
	@hack/build-cert-manager.sh >/dev/null

.PHONY: manifests
manifests: controller-gen ## Generate CRDs, RBAC, the Flux test CRDs and the Helm chart (charts/credo, from config/).
	$(CONTROLLER_GEN) crd paths="github.com/credo-dev/credo/api/..." output:crd:artifacts:config=config/crd/bases
	# One role per controller binary, from the markers of the packages it runs.
	$(CONTROLLER_GEN) rbac:roleName=credo-trust-controller,fileName=trust_controller_role.yaml \
		paths="./controllers/trust/..." output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) rbac:roleName=credo-credential-controller,fileName=credential_controller_role.yaml \
		paths="./controllers/credentials/..." paths="./internal/account/..." paths="./internal/accessapi/..." \
		output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) rbac:roleName=credo-enrollment-controller,fileName=enrollment_controller_role.yaml \
		paths="./controllers/enrollment/..." paths="./internal/enrollment/..." paths="./internal/ca/..." \
		output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) crd paths="github.com/fluxcd/helm-controller/api/v2" \
		paths="github.com/fluxcd/source-controller/api/v1" \
		paths="github.com/fluxcd/kustomize-controller/api/v1" \
		paths="github.com/fluxcd/notification-controller/api/v1beta3" \
		paths="github.com/fluxcd/notification-controller/api/v1" \
		output:crd:artifacts:config=config/testdata/crds
	# The Helm chart, from the manifests above (internal/publish/chart).
	go run ./hack/chartgen -config config -out charts/credo

.PHONY: generate
generate: controller-gen ## Generate deepcopy functions.
	cd api && $(CONTROLLER_GEN) object:headerFile="../hack/boilerplate.go.txt" paths="./..."

.PHONY: fmt
fmt: ## go fmt.
	go fmt ./...
	cd api && go fmt ./...

.PHONY: vet
vet: ## go vet.
	go vet ./...
	# The tagged suites in one pass: one go command schedules their packages
	# across every core, where four ran each other's tails one by one.
	go vet -tags e2e,monitoring,engines,node ./tests/e2e/... ./tests/monitoring/... ./tests/engines/... ./tests/node/...
	cd api && go vet ./...

.PHONY: bench
bench: control-plane build ## Run the Go benchmarks (BENCH=<regexp>).
	go test -run '^$$' -bench '$(BENCH)' -benchmem -count 6 ./...

# One target per area of docs/benchmarks.md: each prints its figures with the
# kube-apiserver requests per operation (by verb and resource) and the CPU per
# operation of kube-apiserver, etcd and the controller. BENCH_COUNT repeats them.
BENCH_COUNT ?= 1
BENCH_RUN = go test -count=$(BENCH_COUNT) -run '^$$' -timeout 60m

.PHONY: bench-trust
bench-trust: control-plane ## Trust anchors: one rotation, cold start and 1,000 rotated at once (CREDO_BENCH_RELEASES).
	CREDO_BENCH_RELEASES=$${CREDO_BENCH_RELEASES:-1000} $(BENCH_RUN) -bench BenchmarkTrustAnchor -benchtime 200x ./controllers/trust/

.PHONY: bench-mint
bench-mint: control-plane ## Mints through kube-apiserver's aggregation: saturated and paced at 200/s.
	$(BENCH_RUN) -bench 'BenchmarkMint$$|BenchmarkPacedMints' -benchtime 2000x ./internal/accessapi/

.PHONY: bench-enrollment
bench-enrollment: control-plane build ## Enrollments and renewals: the shipped enrollment-controller process, and the server in-process.
	$(BENCH_RUN) -bench BenchmarkEnrollmentController -benchtime 400x ./tests/bench/
	$(BENCH_RUN) -bench 'BenchmarkEnrollment$$|BenchmarkRenewal$$' -benchtime 400x ./internal/enrollment/

.PHONY: bench-stepca
bench-stepca: control-plane build ## credo's enrollments and renewals beside step-ca's (built by hack/build-stepca.sh) and beside the floor of their writes, interleaved BENCH_COUNT times.
	dir="$$(hack/build-stepca.sh)" && for i in $$(seq $(BENCH_COUNT)); do \
	  CREDO_BENCH_STEPCA="$$dir/step-ca" go test -count=1 -run '^$$' -timeout 60m \
	    -bench 'BenchmarkEnrollmentController$$|BenchmarkWorkloadRecord$$|BenchmarkStepCA$$' -benchtime 2000x ./tests/bench/ || exit 1; \
	done

.PHONY: bench-memory
bench-memory: control-plane build ## The trust-controller's RSS: idle, with releases, with 10,000 unrelated Secrets, after a rotation.
	CREDO_BENCH_RELEASES=$${CREDO_BENCH_RELEASES:-1000} $(BENCH_RUN) -bench BenchmarkTrustControllerRSS -benchtime 1x ./tests/bench/

.PHONY: bench-peers
bench-peers: control-plane build ## credo's trust figures beside trust-manager's (hack/build-trust-manager.sh: as released, 5 QPS, and unlimited), interleaved BENCH_COUNT times.
	dir="$$(hack/build-trust-manager.sh)" && n=$${CREDO_BENCH_RELEASES:-1000} && for i in $$(seq $(BENCH_COUNT)); do \
	  CREDO_BENCH_RELEASES=$$n go test -v -count=1 -run '^$$' -timeout 60m \
	    -bench 'BenchmarkTrustAnchor$$' -benchtime 200x ./controllers/trust/ || exit 1; \
	  for tm in trust-manager-unlimited trust-manager; do \
	    CREDO_BENCH_RELEASES=$$n CREDO_BENCH_TRUST_MANAGER="$$dir/$$tm" go test -v -count=1 -run '^$$' -timeout 90m \
	      -bench 'BenchmarkTrustManager$$' -benchtime 200x ./tests/bench/ || exit 1; \
	  done; \
	  CREDO_BENCH_RELEASES=$$n go test -v -count=1 -run '^$$' -timeout 60m \
	    -bench 'BenchmarkTrustControllerRSS$$' -benchtime 1x ./tests/bench/ || exit 1; \
	done

.PHONY: lint
lint: golangci-lint kube-api-linter ## golangci-lint (.golangci.yml) on both modules, kube-api-linter (.golangci-kal.yml) on api/.
	$(GOLANGCI_LINT) run ./...
	cd api && $(GOLANGCI_LINT) run --config ../.golangci.yml ./...
	cd api && $(KUBE_API_LINTER) run --config ../.golangci-kal.yml ./...

.PHONY: verify
verify: manifests generate fmt vet lint ## Regenerate, vet and lint, tidy, then fail on a dirty tree.
	go mod tidy
	cd api && go mod tidy
	@if [ -n "$$(git status --porcelain)" ]; then \
		echo "verify: the tree is dirty after regenerating:"; git status --porcelain; git --no-pager diff; exit 1; fi

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN)
$(CONTROLLER_GEN):
	GOBIN=$(BIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(BIN)/controller-gen $@

.PHONY: golangci-lint
golangci-lint: kube-api-linter

.PHONY: kube-api-linter
kube-api-linter: $(KUBE_API_LINTER)
$(KUBE_API_LINTER): $(KAL_MOD)/go.mod $(KAL_MOD)/go.sum $(KAL_MOD)/main.go
	@grep -q '^	github.com/golangci/golangci-lint/v2 $(GOLANGCI_LINT_VERSION)$$' $(KAL_MOD)/go.mod || \
		{ echo "$(KAL_MOD)/go.mod must require golangci-lint $(GOLANGCI_LINT_VERSION), as GOLANGCI_LINT_VERSION does"; exit 1; }
	cd $(KAL_MOD) && go build -o $@ .

# The embedded CA's key in a PKCS#11 token (internal/ca/pkcs11) needs cgo: github.com/miekg/pkcs11
# loads the token's module, a shared library. Only these two targets build with CGO_ENABLED=1
# and the pkcs11 tag; every other target, and the release image, stays static and without it
# (an enrollment-controller built so refuses the --enrollment-ca-pkcs11-* flags).
.PHONY: build-pkcs11
build-pkcs11: ## Build bin/pkcs11/enrollment-controller with PKCS#11 support (cgo, dynamically linked; a C compiler: hack/pkcs11/install.sh).
	@mkdir -p $(BIN)/pkcs11
	@hack/progress.sh "the PKCS#11 enrollment-controller" env CGO_ENABLED=1 \
		go build -tags pkcs11 -ldflags "$(LDFLAGS)" -o $(BIN)/pkcs11/enrollment-controller ./cmd/enrollment-controller

.PHONY: test-pkcs11
test-pkcs11: control-plane golangci-lint ## Prove the embedded CA with its key in SoftHSM2 (Debian's, installed by hack/pkcs11/install.sh): vet, lint and tests of the pkcs11-tagged code, with cgo.
	@hack/pkcs11/install.sh >/dev/null
	CGO_ENABLED=1 go vet -tags pkcs11 ./internal/ca/pkcs11/... ./tests/pkcs11/...
	CGO_ENABLED=1 $(GOLANGCI_LINT) run --build-tags pkcs11 ./internal/ca/pkcs11/... ./tests/pkcs11/...
	module="$$(hack/pkcs11/install.sh 2>/dev/null)" && CGO_ENABLED=1 CREDO_SOFTHSM2_MODULE="$$module" \
		go test $(GO_TEST_FLAGS) -tags pkcs11 -timeout 15m ./internal/ca/pkcs11/... ./tests/pkcs11/...

.PHONY: test-engines
test-engines: control-plane build ## Prove the verifier formats against real PostgreSQL, MariaDB and ClickHouse.
	hack/engines/install.sh
	go test $(GO_TEST_FLAGS) -tags engines -timeout 20m ./tests/engines/...
