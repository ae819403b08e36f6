# Build a release binary with the Swift toolchain, run it on Debian slim as a non-root user.
FROM swift:6.3-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
      pkg-config libsqlite3-dev libcmark-gfm-dev libcmark-gfm-extensions-dev \
      libmicrohttpd-dev libcurl4-openssl-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
RUN swift build -c release --product parley --static-swift-stdlib \
    && cp .build/release/parley /parley

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends \
      ca-certificates libsqlite3-0 libcmark-gfm0.29.0.gfm.6 libcmark-gfm-extensions0.29.0.gfm.6 \
      libmicrohttpd12 libcurl4 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --home /data --shell /usr/sbin/nologin parley \
    && mkdir -p /data && chown parley /data
COPY --from=build /parley /usr/local/bin/parley
COPY Public /srv/parley/Public
USER parley
VOLUME ["/data"]
ENV PARLEY_HOST=0.0.0.0 PARLEY_PORT=8080 PARLEY_DB=/data/parley.db PARLEY_PUBLIC=/srv/parley/Public
EXPOSE 8080
CMD ["/usr/local/bin/parley"]
