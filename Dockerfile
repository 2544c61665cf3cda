# syntax=docker/dockerfile:1
#
# egsolve: the energy game solving service, as one image for a lab's GPU server.
#
#   docker build -t egsolve .
#   docker run --gpus all -p 8080:8080 -v egsolve-data:/var/lib/egsolve \
#     -v "$PWD/tokens:/run/secrets/egsolve-tokens:ro" egsolve
#
# Stage 1 builds the release binary. No CUDA is needed to build: cudarc loads libcuda and
# libnvrtc at run time. Stage 2 is NVIDIA's CUDA *runtime* image of the major version the
# bindings were built for (Cargo.toml: cudarc feature `cuda-13000` → CUDA 13, which looks for
# `libnvrtc.so.13`); it carries libnvrtc, and the NVIDIA container toolkit mounts the host
# driver's libcuda in. Without a GPU (or without `--gpus`) the same image serves on the CPU.
# docs/deploy.md describes running it; tests/deploy.rs keeps the names below true.

ARG RUST_VERSION=1
ARG CUDA_VERSION=13.0.1

FROM rust:${RUST_VERSION}-bookworm AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin egsolve \
    && install -D -m 0755 target/release/egsolve /out/egsolve

FROM nvidia/cuda:${CUDA_VERSION}-runtime-ubuntu24.04 AS runtime
LABEL org.opencontainers.image.title="egsolve" \
      org.opencontainers.image.description="Energy game solving service (HTTP job API; CUDA, parallel CPU and reference backends)" \
      org.opencontainers.image.licenses="MIT OR Apache-2.0"

# A fixed, unprivileged uid/gid: volume and secret permissions can name it (docs/deploy.md).
RUN groupadd --system --gid 10001 egsolve \
    && useradd --system --uid 10001 --gid egsolve --home-dir /var/lib/egsolve \
       --no-create-home --shell /usr/sbin/nologin egsolve \
    && install -d -o egsolve -g egsolve -m 0750 /var/lib/egsolve

COPY --from=build /out/egsolve /usr/local/bin/egsolve

# `docker stop` waits 10 s before SIGKILL: the server's own grace time for open requests is
# below that (raise both together: `docker run --stop-timeout 90 -e EGSOLVE_SHUTDOWN_GRACE_SECS=60`).
# The container toolkit exposes the GPUs and the driver's compute library (libcuda) and
# nvidia-smi; the service needs nothing else from the driver.
ENV NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility \
    EGSOLVE_BIND=0.0.0.0:8080 \
    EGSOLVE_DATA_DIR=/var/lib/egsolve \
    EGSOLVE_AUTH=true \
    EGSOLVE_TOKENS_FILE=/run/secrets/egsolve-tokens \
    EGSOLVE_SERVER=http://127.0.0.1:8080 \
    EGSOLVE_LOG=info \
    EGSOLVE_SHUTDOWN_GRACE_SECS=8

USER egsolve:egsolve
WORKDIR /var/lib/egsolve
VOLUME ["/var/lib/egsolve"]
EXPOSE 8080

# `egsolve healthcheck` asks EGSOLVE_SERVER's /healthz (no curl in the image).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["egsolve", "healthcheck"]

# SIGTERM: stop accepting, finish open requests (long polls last at most 60 s), put running
# jobs back in the queue, close the store. Give it 90 s (`docker stop -t 90`).
STOPSIGNAL SIGTERM
ENTRYPOINT ["egsolve"]
CMD ["serve"]
