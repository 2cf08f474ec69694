# Redis from Debian's packages, for the compose stack.
ARG BASE=timeshare/debian:bookworm
FROM ${BASE}
RUN apt-get update && apt-get install -y --no-install-recommends redis-server \
 && rm -rf /var/lib/apt/lists/* /usr/share/doc/*
USER redis
CMD ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no"]
HEALTHCHECK --interval=2s --timeout=3s --retries=30 CMD ["redis-cli", "ping"]
