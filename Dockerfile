# The image of `toolgate serve` (the book's "Operations", "A container
# image"). Build from the checkout's root:
#
#   docker build -t toolgate .        (or: podman build -t toolgate .)
#
# It runs as the unprivileged user `toolgate` (uid 10001), reads its config
# from /etc/toolgate/toolgate.toml (mount it read-only) and keeps a SQLite
# store in /var/lib/toolgate (a volume) unless the config names PostgreSQL.

# The toolchain CI builds and tests with.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p toolgate-cli \
    && install -D -m 0755 target/release/toolgate /out/toolgate

# The same Debian release as the build: the binary needs its glibc only.
FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --user-group --no-create-home \
        --home-dir /var/lib/toolgate --shell /usr/sbin/nologin toolgate \
    && install -d -o toolgate -g toolgate -m 0750 /var/lib/toolgate \
    && install -d -m 0755 /etc/toolgate
COPY --from=build /out/toolgate /usr/local/bin/toolgate
USER 10001:10001
WORKDIR /var/lib/toolgate
VOLUME ["/var/lib/toolgate"]
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/toolgate"]
CMD ["serve", "--config", "/etc/toolgate/toolgate.toml", "--listen", "0.0.0.0:8080"]
