#!/usr/bin/env bash
# `npm run images`: builds timeshare/api, timeshare/scheduler, timeshare/worker-node and
# timeshare/webhooks (tag :local,
# or $TIMESHARE_IMAGE_TAG) from this checkout. Starts a Docker engine when none answers (engine.sh)
# and builds the local base images when missing (base-image.sh). Builds use the host network: on our
# machines that is the only way out to Debian's mirror and the npm registry.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tag="${TIMESHARE_IMAGE_TAG:-local}"

"$here/engine.sh"
"$here/base-image.sh"

# The build stage's npm trusts what this machine trusts (a TLS-inspecting proxy's CA included).
ca="$here/build-ca.pem"
: >"$ca"
for bundle in "${NODE_EXTRA_CA_CERTS:-}" "${SSL_CERT_FILE:-}" /etc/ssl/certs/ca-certificates.crt; do
  if [[ -n "$bundle" && -f "$bundle" ]]; then
    cp "$bundle" "$ca"
    break
  fi
done

for process in api scheduler worker-node webhooks; do
  start=$(date +%s)
  echo "[images] building timeshare/$process:$tag" >&2
  docker build --network host -q -f "$here/$process.Dockerfile" -t "timeshare/$process:$tag" "$root" >/dev/null
  echo "[images] timeshare/$process:$tag built in $(($(date +%s) - start)) s" >&2
done
# What the compose stack runs beside them, from Debian's packages and npm (no registry images).
for service in postgres:15 redis:7 s3rver:3; do
  name="${service%%:*}"
  file="$here/$name.Dockerfile"
  [[ "$name" == s3rver ]] && file="$here/s3.Dockerfile"
  if [[ "${TIMESHARE_REBUILD_BASE:-0}" == 1 ]] || ! docker image inspect "timeshare/$service" >/dev/null 2>&1; then
    start=$(date +%s)
    docker build --network host -q -f "$file" -t "timeshare/$service" "$root" >/dev/null
    echo "[images] timeshare/$service built in $(($(date +%s) - start)) s" >&2
  fi
done
docker image ls --format '{{.Repository}}:{{.Tag}}\t{{.Size}}' | grep '^timeshare/' >&2
