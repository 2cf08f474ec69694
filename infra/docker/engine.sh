#!/usr/bin/env bash
# Makes sure a Docker engine answers. On a Debian machine without one (our build machines), installs
# Debian's docker.io and starts dockerd without iptables (there is no NAT there; containers and
# builds use the host network). A laptop's running Docker Desktop is used as it is.
set -euo pipefail

say() { echo "[engine] $*" >&2; }

if docker info >/dev/null 2>&1; then exit 0; fi

if ! command -v dockerd >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    say "no Docker engine answers and this is not a Debian machine: start Docker, then run again"
    exit 1
  fi
  say "installing Debian's docker.io (no Docker engine on this machine)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends docker.io >/dev/null ||
    { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends docker.io >/dev/null; }
fi

say "starting dockerd --iptables=false (log: /var/log/timeshare-dockerd.log); stop it with: kill \$(cat /var/run/docker.pid)"
nohup dockerd --iptables=false >/var/log/timeshare-dockerd.log 2>&1 &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then exit 0; fi
  sleep 0.5
done
say "dockerd did not answer within 30 s; see /var/log/timeshare-dockerd.log"
exit 1
