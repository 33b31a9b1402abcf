#!/usr/bin/env bash
# CI: a candidate-image base built from Debian packages (no registry is reachable here):
# mmdebstrap a bookworm root with Python 3, numpy, scipy, networkx, pip and Coq (the proof checker
# of the theorem tracks, run in the candidate sandbox), then `docker import`.
# Usage: .ci/docker-base.sh [TAG]   (default tcsexam-base:bookworm). Needs a running engine.
# The image carries the digest of its inputs (this script: the suite and the package list) as the
# label org.tcsexam.inputs; an image of that tag with the same digest is kept (an engine whose data
# root persists, .ci/start-docker.sh, builds it once). TCSEXAM_REBUILD_IMAGES=1 rebuilds anyway
# (e.g. to take Debian's security updates).
set -euo pipefail
tag="${1:-tcsexam-base:bookworm}"
inputs="$(sha256sum "$0" | cut -c1-64)"
have="$(docker image inspect --format '{{index .Config.Labels "org.tcsexam.inputs"}}' "$tag" 2>/dev/null || true)"
if [ "$have" = "$inputs" ] && [ "${TCSEXAM_REBUILD_IMAGES:-0}" != 1 ]; then
    echo "docker-base: $tag is built from these inputs ($inputs): kept" >&2
    exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mmdebstrap --variant=apt \
    --include=python3-minimal,python3-numpy,python3-scipy,python3-networkx,python3-pip,ca-certificates,coq \
    bookworm "$tmp/base.tar"
docker import --change "LABEL org.tcsexam.inputs=$inputs" "$tmp/base.tar" "$tag"
