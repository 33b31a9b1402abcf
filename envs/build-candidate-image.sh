#!/usr/bin/env bash
# Build the Docker sandbox's candidate image from envs/candidate.Dockerfile.
#   envs/build-candidate-image.sh [TAG] [BASE]     (defaults: tcsexam-candidate:latest, python:3.11-slim)
# The host's pip CA bundle (pip config, $PIP_CERT, else the system bundle) goes into the build
# context so that pip inside the build trusts the same proxy as the host.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tag="${1:-${TCSEXAM_DOCKER_IMAGE:-tcsexam-candidate:latest}}"
base="${2:-${BASE:-python:3.11-slim}}"
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
cp "$here/candidate.Dockerfile" "$ctx/Dockerfile"
cert="${PIP_CERT:-}"
if [ -z "$cert" ] && command -v pip >/dev/null 2>&1; then
    cert="$(pip config get global.cert 2>/dev/null || true)"
fi
[ -n "$cert" ] || cert=/etc/ssl/certs/ca-certificates.crt
if [ -f "$cert" ]; then cp "$cert" "$ctx/ca-bundle.crt"; else : >"$ctx/ca-bundle.crt"; fi
docker build --network host --build-arg "BASE=$base" -t "$tag" "$ctx"
docker image inspect --format '{{.Id}}' "$tag"
