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

RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/ ./cmd/...

FROM gcr.io/distroless/static:nonroot

COPY --from=builder /out/ /

USER 65532:65532

ENTRYPOINT ["/trust-controller"]
