#!/usr/bin/env bash
# The init (pid 1) of one compute node of .ci/start-slurm-cluster.sh, started inside the node's
# fresh network, UTS, mount and PID namespaces: gives the node its hostname, its /etc/hosts and
# its private per-machine folders and its /etc/slurm (the cluster's configuration where every
# SLURM command looks for it: Snakemake's jobstep executor drops SLURM_CONF from the environment of
# the `srun` it starts inside a job), then runs slurmd in the foreground and reaps orphans (bash as
# pid 1 waits on every child). Arguments: NODE_NAME NODE_DIR SLURM_CONF HOSTS_FILE.
set -euo pipefail
name="$1" dir="$2" conf="$3" hosts="$4"

hostname "$name"
mount --bind "$hosts" /etc/hosts
mkdir -p /etc/slurm
mount --bind "$(dirname "$conf")" /etc/slurm
# per-machine state: never shared between nodes
mount --bind "$dir/tmp" /tmp
mount --bind "$dir/var-tmp" /var/tmp
mount -t tmpfs -o mode=1777,size=1g tmpfs /dev/shm
mkdir -p /run/slurm /var/spool/slurmd /var/log/slurm
mount --bind "$dir/run-slurm" /run/slurm
mount --bind "$dir/spool" /var/spool/slurmd
mount --bind "$dir/log" /var/log/slurm

export SLURM_CONF=/etc/slurm/$(basename "$conf")
slurmd -D -f "$SLURM_CONF" &
slurmd_pid=$!
trap 'kill "$slurmd_pid" 2>/dev/null' TERM INT
while kill -0 "$slurmd_pid" 2>/dev/null; do
    wait || true
done
