#!/usr/bin/env bash
# Build one of the sandbox images (envs/<NAME>.Dockerfile) with the host's pip CA bundle.
#   envs/build-image.sh NAME TAG BASE [FILE ...]   (FILE: extra files of envs/ for the build context)
# The host's pip CA bundle (pip config, $PIP_CERT, else the system bundle) goes into the build
# context as ca-bundle.crt, so that pip inside the build trusts the same proxy as the host.
# A step whose inputs (base image, Dockerfile lines, copied files) are unchanged comes from the
# engine's build cache (kept between CI runs where the data root persists: .ci/start-docker.sh);
# TCSEXAM_REBUILD_IMAGES=1 builds every step again. The previous build of TAG, left untagged, is
# pruned.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
name="$1" tag="$2" base="$3"
shift 3
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
cp "$here/$name.Dockerfile" "$ctx/Dockerfile"
for extra in "$@"; do cp "$here/${extra%%:*}" "$ctx/${extra#*:}"; done
cert="${PIP_CERT:-}"
if [ -z "$cert" ] && command -v pip >/dev/null 2>&1; then
    cert="$(pip config get global.cert 2>/dev/null || true)"
fi
[ -n "$cert" ] || cert=/etc/ssl/certs/ca-certificates.crt
if [ -f "$cert" ]; then cp "$cert" "$ctx/ca-bundle.crt"; else : >"$ctx/ca-bundle.crt"; fi
fresh=()
[ "${TCSEXAM_REBUILD_IMAGES:-0}" != 1 ] || fresh=(--no-cache)
docker build --network host "${fresh[@]}" --build-arg "BASE=$base" -t "$tag" "$ctx"
docker image prune --force --filter "dangling=true" >/dev/null
docker image inspect --format '{{.Id}}' "$tag"
