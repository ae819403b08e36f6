# Build a stripped release binary with the Swift toolchain, run it on Debian slim as a fixed
# non-root user. `make docker-check` runs these stages without a Docker engine: it parses this file
# (COPY, RUN, USER, ENV, HEALTHCHECK), so keep every path it copies under the build stage's WORKDIR.
FROM swift:6.3-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
      pkg-config libsqlite3-dev libcmark-gfm-dev libcmark-gfm-extensions-dev \
      libmicrohttpd-dev libcurl4-openssl-dev libsodium-dev nettle-dev libvips-dev libpoppler-glib-dev libyajl-dev libsimdjson-dev libpq-dev libhiredis-dev binutils \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Package.swift declares the test targets, so SwiftPM needs Tests/ to read the manifest.
COPY Package.swift ./
COPY Sources ./Sources
# Sources/ParleyServer/openapi.json links to this file; its bytes are compiled into the server.
COPY docs/openapi.json ./docs/openapi.json
COPY Tests ./Tests
# vips.pc and poppler-glib.pc without glib's -pthread, so SwiftPM builds without a warning (the script
# says why); $PWD rather than /src, as `make docker-check` runs this in a folder standing for /src.
COPY scripts/pkgconfig-without-pthread.sh ./scripts/
# Not here: libjansson-dev (Package.swift's CJansson), read only by parley-chunk-bench for `make bench`;
# neither product built below links it, so the image needs neither it nor libjansson4.
# Two executables: the server, and the worker it runs beside itself to decode each uploaded image or
# PDF (only the worker links libvips and poppler, so the server starts without them).
RUN scripts/pkgconfig-without-pthread.sh "$PWD/.build/pkgconfig" \
    && PKG_CONFIG_PATH="$PWD/.build/pkgconfig" swift build -c release --product parley --static-swift-stdlib \
    && PKG_CONFIG_PATH="$PWD/.build/pkgconfig" swift build -c release --product parley-media-worker --static-swift-stdlib \
    && strip -o parley .build/release/parley \
    && strip -o parley-media-worker .build/release/parley-media-worker

FROM debian:bookworm-slim
# uid/gid 10001: a bind-mounted /data must be writable by it (`chown 10001:10001 DIR`, see README).
RUN apt-get update && apt-get install -y --no-install-recommends \
      ca-certificates libsqlite3-0 libcmark-gfm0.29.0.gfm.6 libcmark-gfm-extensions0.29.0.gfm.6 \
      libmicrohttpd12 libcurl4 libsodium23 libnettle8 libvips42 libpoppler-glib8 libyajl2 libsimdjson14 libpq5 libhiredis0.14 \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --gid 10001 parley \
    && useradd --uid 10001 --gid parley --home-dir /data --no-create-home \
         --shell /usr/sbin/nologin parley \
    && mkdir -p /data && chown parley:parley /data
COPY --from=build /src/parley /usr/local/bin/parley
# parley runs it from its own directory; libvips42 and libpoppler-glib8 above are for it.
COPY --from=build /src/parley-media-worker /usr/local/bin/parley-media-worker
COPY Public /srv/parley/Public
USER 10001:10001
VOLUME ["/data"]
# 0.0.0.0 means team mode: the first start needs PARLEY_ADMIN_USER and PARLEY_ADMIN_PASSWORD
# (`docker run -e …`), or an admin made with `docker exec … parley user add NAME --admin`.
ENV PARLEY_HOST=0.0.0.0 PARLEY_PORT=8080 PARLEY_DB=/data/parley.db PARLEY_PUBLIC=/srv/parley/Public
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["/usr/local/bin/parley", "healthcheck"]
CMD ["/usr/local/bin/parley"]
