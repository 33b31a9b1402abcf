#!/usr/bin/env bash
# Build the Docker sandbox's candidate image from envs/candidate.Dockerfile.
#   envs/build-candidate-image.sh [TAG] [BASE]     (defaults: tcsexam-candidate:latest, python:3.11-slim)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec bash "$here/build-image.sh" candidate "${1:-${TCSEXAM_DOCKER_IMAGE:-tcsexam-candidate:latest}}" \
    "${2:-${BASE:-python:3.11-slim}}"
