#!/usr/bin/env bash
# Build the OR-Space sandbox image from envs/orspace.Dockerfile on top of the candidate image.
#   envs/build-orspace-image.sh [TAG] [BASE]   (defaults: tcsexam-orspace:latest, tcsexam-candidate:latest)
# The host's pip CA bundle goes into the build context, as for the candidate image.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tag="${1:-tcsexam-orspace:latest}"
base="${2:-tcsexam-candidate:latest}"
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
cp "$here/orspace.Dockerfile" "$ctx/Dockerfile"
cp "$here/orspace-requirements.txt" "$ctx/requirements.txt"
cert="${PIP_CERT:-}"
if [ -z "$cert" ] && command -v pip >/dev/null 2>&1; then
    cert="$(pip config get global.cert 2>/dev/null || true)"
fi
[ -n "$cert" ] || cert=/etc/ssl/certs/ca-certificates.crt
if [ -f "$cert" ]; then cp "$cert" "$ctx/ca-bundle.crt"; else : >"$ctx/ca-bundle.crt"; fi
docker build --network host --build-arg "BASE=$base" -t "$tag" "$ctx"
docker image inspect --format '{{.Id}}' "$tag"
