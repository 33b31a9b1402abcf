#!/usr/bin/env bash
# Source me: start a private Docker engine (as in /work/shared/notes/docker.md: overlay2, no bridge,
# no iptables, its own data root) and export DOCKER_HOST. Stop it with: kill "$(cat "$TCSEXAM_DOCKERD_DIR/docker.pid")"
TCSEXAM_DOCKERD_DIR="$(mktemp -d /tmp/tcsexam-dockerd.XXXXXX)"
export TCSEXAM_DOCKERD_DIR
dockerd --storage-driver=overlay2 --iptables=false --ip-masq=false --bridge=none \
    --data-root "$TCSEXAM_DOCKERD_DIR/root" --exec-root "$TCSEXAM_DOCKERD_DIR/exec" \
    -H "unix://$TCSEXAM_DOCKERD_DIR/docker.sock" -p "$TCSEXAM_DOCKERD_DIR/docker.pid" \
    >"$TCSEXAM_DOCKERD_DIR/log" 2>&1 &
export DOCKER_HOST="unix://$TCSEXAM_DOCKERD_DIR/docker.sock"
for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
done
docker info >/dev/null || { cat "$TCSEXAM_DOCKERD_DIR/log"; false; }
