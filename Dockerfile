# Builds every credo controller binary into one image; each Deployment picks
# its binary with `command:` (config/manager), trust-controller by default.
FROM golang:1.26 AS builder

WORKDIR /workspace

# Download the modules first so the layer is cached across source changes.
# api/ is a nested module the root module replaces with ./api.
COPY go.mod go.sum ./
COPY api/go.mod api/go.sum api/
RUN go mod download

COPY api/ api/
COPY cmd/ cmd/
COPY controllers/ controllers/
COPY internal/ internal/
COPY pkg/ pkg/

# What --version prints and credo_build_info labels (internal/version): the
# build context holds no .git, so the commit is stamped too, as make build
# does (docker build --build-arg VERSION=v0.1.0 --build-arg COMMIT=$(git rev-parse HEAD)).
ARG VERSION=devel
ARG COMMIT=
RUN CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X github.com/credo-dev/credo/internal/version.version=${VERSION} -X github.com/credo-dev/credo/internal/version.commit=${COMMIT}" \
    -o /out/ ./cmd/...

FROM gcr.io/distroless/static:nonroot

COPY --from=builder /out/ /

USER 65532:65532

ENTRYPOINT ["/trust-controller"]
