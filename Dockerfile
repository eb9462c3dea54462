# Multi-stage build: a static binary in a distroless image that runs as non-root.
# Build with `make docker`, which passes the revision and branch; a plain
# `docker build .` still stamps the version from the VERSION file.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG REVISION=unknown
ARG BRANCH=unknown
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w \
        -X github.com/prometheus/common/version.Version=$(cat VERSION) \
        -X github.com/prometheus/common/version.Revision=${REVISION} \
        -X github.com/prometheus/common/version.Branch=${BRANCH} \
        -X github.com/prometheus/common/version.BuildUser=docker \
        -X github.com/prometheus/common/version.BuildDate=$(date -u +%Y%m%d-%H:%M:%S)" \
      -o /out/global_stability_exporter .

# distroless/static carries a CA bundle (for TLS to the API), tzdata and a
# nonroot user, and nothing else.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/global_stability_exporter /bin/global_stability_exporter
USER nonroot:nonroot
EXPOSE 10110
ENTRYPOINT ["/bin/global_stability_exporter"]
