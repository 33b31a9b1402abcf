#!/usr/bin/env bash
# CI: a candidate-image base built from Debian packages (no registry is reachable here):
# mmdebstrap a bookworm root with Python 3, numpy, scipy, networkx, pip and Coq (the proof checker
# of the theorem tracks, run in the candidate sandbox), then `docker import`.
# Usage: .ci/docker-base.sh [TAG]   (default tcsexam-base:bookworm). Needs a running engine.
set -euo pipefail
tag="${1:-tcsexam-base:bookworm}"
if docker image inspect "$tag" >/dev/null 2>&1; then exit 0; fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mmdebstrap --variant=apt \
    --include=python3-minimal,python3-numpy,python3-scipy,python3-networkx,python3-pip,ca-certificates,coq \
    bookworm "$tmp/base.tar"
docker import "$tmp/base.tar" "$tag"
