#!/usr/bin/env bash
# Source me: start a private Docker engine (as in /work/shared/notes/docker.md: overlay2, no bridge,
# no iptables) and export DOCKER_HOST. Stop it with: kill "$(cat "$TCSEXAM_DOCKERD_DIR/docker.pid")"
# Its data root (images and the build cache) persists in $TCSEXAM_DOCKER_CACHE (default
# /var/cache/tcsexam/docker), so that later CI runs on this machine reuse what was built from the
# same inputs: .ci/docker-base.sh keys its image by its inputs' digest, docker build's layer cache
# keys every step by its inputs. An engine started while another holds the cache (its lock), or
# where the cache cannot be written, gets a temporary data root and builds from scratch.
TCSEXAM_DOCKERD_DIR="$(mktemp -d /tmp/tcsexam-dockerd.XXXXXX)"
export TCSEXAM_DOCKERD_DIR
_docker_cache="${TCSEXAM_DOCKER_CACHE:-/var/cache/tcsexam/docker}"
_docker_root="$TCSEXAM_DOCKERD_DIR/root"
# The lock's descriptor is inherited by dockerd: the cache stays taken while that engine lives.
if mkdir -p "$_docker_cache" 2>/dev/null && exec {_docker_lock}>>"$_docker_cache/lock" \
    && flock -n "$_docker_lock"; then
    _docker_root="$_docker_cache/root"
    echo "start-docker: data root $_docker_root (kept between runs)" >&2
else
    echo "start-docker: $_docker_cache is in use or not writable: a temporary data root" >&2
fi
dockerd --storage-driver=overlay2 --iptables=false --ip-masq=false --bridge=none \
    --data-root "$_docker_root" --exec-root "$TCSEXAM_DOCKERD_DIR/exec" \
    -H "unix://$TCSEXAM_DOCKERD_DIR/docker.sock" -p "$TCSEXAM_DOCKERD_DIR/docker.pid" \
    >"$TCSEXAM_DOCKERD_DIR/log" 2>&1 &
export DOCKER_HOST="unix://$TCSEXAM_DOCKERD_DIR/docker.sock"
for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
done
docker info >/dev/null || { cat "$TCSEXAM_DOCKERD_DIR/log"; false; }
