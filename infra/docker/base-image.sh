#!/usr/bin/env bash
# Builds the two local base images every Dockerfile starts from, because no image registry is
# reachable from our machines:
#   timeshare/debian:bookworm  a debootstrapped Debian minbase root, imported, docs and caches removed
#   timeshare/node:20          the above plus Node 20 (binary, headers for node-gyp, npm)
# Each is built only when missing (TIMESHARE_REBUILD_BASE=1 forces). Node comes from this machine
# when it runs Node 20 on Linux (same bytes as our tests ran on); otherwise from the npm registry's
# node-linux-<arch> package, so a laptop needs nothing but Docker.
set -euo pipefail

say() { echo "[base] $*" >&2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DEBIAN_IMAGE=timeshare/debian:bookworm
NODE_IMAGE=timeshare/node:20
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

have() { [[ "${TIMESHARE_REBUILD_BASE:-0}" != 1 ]] && docker image inspect "$1" >/dev/null 2>&1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if ! have "$DEBIAN_IMAGE"; then
  if command -v debootstrap >/dev/null 2>&1 || command -v apt-get >/dev/null 2>&1; then
    if ! command -v debootstrap >/dev/null 2>&1; then
      say "installing debootstrap"
      DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap >/dev/null
    fi
    say "debootstrapping Debian bookworm (minbase) from $MIRROR"
    debootstrap --variant=minbase bookworm "$work/root" "$MIRROR" >"$work/debootstrap.log" 2>&1 ||
      { tail -20 "$work/debootstrap.log"; exit 1; }
    # What a container never reads: package caches, docs, man pages, locales but C.UTF-8.
    rm -rf "$work/root"/var/cache/apt/archives/*.deb "$work/root"/var/lib/apt/lists/* \
      "$work/root"/usr/share/doc/* "$work/root"/usr/share/man/* "$work/root"/usr/share/info/*
    find "$work/root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name 'C.*' -exec rm -rf {} +
    tar -C "$work/root" -c . | docker import -c 'CMD ["/bin/bash"]' - "$DEBIAN_IMAGE" >/dev/null
  else
    # A laptop without debootstrap: its Docker can reach Docker Hub's official Debian image.
    say "no debootstrap here: tagging debian:bookworm-slim as $DEBIAN_IMAGE"
    docker pull debian:bookworm-slim >/dev/null
    docker tag debian:bookworm-slim "$DEBIAN_IMAGE"
  fi
  say "built $DEBIAN_IMAGE"
fi

if ! have "$NODE_IMAGE"; then
  mkdir -p "$work/node/bin" "$work/node/include" "$work/node/lib"
  host_node="$(command -v node || true)"
  if [[ -n "$host_node" && "$(uname -s)" == Linux && "$("$host_node" -p 'process.versions.node.split(".")[0]')" == 20 &&
    -f "$(dirname "$(dirname "$(readlink -f "$host_node")")")/include/node/node.h" ]]; then
    prefix="$(dirname "$(dirname "$(readlink -f "$host_node")")")"
    say "Node $("$host_node" --version) from this machine ($prefix)"
    cp "$(readlink -f "$host_node")" "$work/node/bin/node"
    cp -r "$prefix/include/node" "$work/node/include/"
    cp -r "$prefix/lib/node_modules" "$work/node/lib/"
  else
    arch="$(docker info --format '{{.Architecture}}')"
    case "$arch" in x86_64 | amd64) arch=x64 ;; aarch64 | arm64) arch=arm64 ;; esac
    say "Node 20 from the npm registry (node-linux-$arch)"
    (cd "$work" && npm pack --silent "node-linux-$arch@20" >/dev/null && tar xzf node-linux-*.tgz)
    cp "$work/package/bin/node" "$work/node/bin/node"
    [[ -d "$work/package/include/node" ]] && cp -r "$work/package/include/node" "$work/node/include/"
    (cd "$work" && npm pack --silent npm@10 >/dev/null && mkdir -p node/lib/node_modules &&
      tar xzf npm-10*.tgz && mv package node/lib/node_modules/npm)
  fi
  cp "$here/node.Dockerfile" "$work/node/Dockerfile"
  docker build --network host -q -t "$NODE_IMAGE" --build-arg "BASE=$DEBIAN_IMAGE" "$work/node" >/dev/null
  say "built $NODE_IMAGE"
fi
