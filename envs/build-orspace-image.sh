#!/usr/bin/env bash
# Build the OR-Space sandbox image from envs/orspace.Dockerfile on top of the candidate image.
#   envs/build-orspace-image.sh [TAG] [BASE]   (defaults: tcsexam-orspace:latest, tcsexam-candidate:latest)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec bash "$here/build-image.sh" orspace "${1:-tcsexam-orspace:latest}" "${2:-tcsexam-candidate:latest}" \
    orspace-requirements.txt:requirements.txt
