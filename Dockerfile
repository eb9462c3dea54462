# Multi-stage build: a static binary in a distroless image that runs as non-root.
# Build with `make docker`, which passes the revision and branch; a plain
# `docker build .` still stamps the version from the VERSION file.
#
# Several platforms at once, the buildx way: the Go stage runs on the
# builder's own platform and cross-compiles for each target (no emulation),
# and only the distroless stage is per platform:
#
#   docker buildx build --platform linux/amd64,linux/arm64,linux/arm/v7 \
#     --build-arg REVISION=$(git rev-parse HEAD) \
#     --build-arg BRANCH=$(git rev-parse --abbrev-ref HEAD) \
#     -t registry.example.com/global-stability-exporter:$(cat VERSION) --push .
#
# BUILDPLATFORM and TARGET* are set by BuildKit (the default builder since
# Docker 23). dockerfile_test.go checks the parts that make this work.

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG REVISION=unknown
ARG BRANCH=unknown
ARG TARGETOS TARGETARCH TARGETVARIANT
# GOARM from the variant: v7 for linux/arm/v7 gives GOARM=7; empty elsewhere.
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH GOARM=${TARGETVARIANT#v} \
    go build -trimpath \
      -ldflags "-s -w \
        -X github.com/prometheus/common/version.Version=$(cat VERSION) \
        -X github.com/prometheus/common/version.Revision=${REVISION} \
        -X github.com/prometheus/common/version.Branch=${BRANCH} \
        -X github.com/prometheus/common/version.BuildUser=docker \
        -X github.com/prometheus/common/version.BuildDate=$(date -u +%Y%m%d-%H:%M:%S)" \
      -o /out/global_stability_exporter .

# distroless/static carries a CA bundle (for TLS to the API), tzdata and a
# nonroot user, and nothing else; it is published for amd64, arm64 and arm.
FROM gcr.io/distroless/static-debian12:nonroot
LABEL maintainer="The global_stability_exporter maintainers (MAINTAINERS.md)"
COPY --from=build /out/global_stability_exporter /bin/global_stability_exporter
USER nonroot:nonroot
EXPOSE 10110
ENTRYPOINT ["/bin/global_stability_exporter"]
