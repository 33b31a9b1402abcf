#!/usr/bin/env bash
# Configure and start a one-node SLURM cluster on localhost (munge + slurmctld + slurmd), then wait
# until `sinfo` shows the node idle. Idempotent: when the cluster already answers with an idle
# node, nothing is restarted. Must run as root. Hostname, CPUs and memory are read at run time.
#
# Facts behind the settings: ../shared/notes/local-slurm.md (no cgroup plugins in hybrid cgroup
# mode, no accounting database, so the Snakemake profile uses `squeue` as its status command and
# MinJobAge keeps finished jobs visible to squeue).
#
# Environment: SLURM_START_TIMEOUT (seconds to wait for an idle node, default 60),
#              SLURM_CONF_DIR (default /etc/slurm).
set -euo pipefail

TIMEOUT="${SLURM_START_TIMEOUT:-60}"
CONF_DIR="${SLURM_CONF_DIR:-/etc/slurm}"
CONF="$CONF_DIR/slurm.conf"

log() { echo "start-slurm: $*" >&2; }
die() { echo "start-slurm: ERROR: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (it writes $CONF and starts daemons)"
for bin in munged slurmctld slurmd sinfo scontrol; do
    command -v "$bin" >/dev/null 2>&1 || [ -x "/usr/sbin/$bin" ] || die "$bin not installed (apt-get install munge slurmctld slurmd slurm-client)"
done
export PATH="/usr/sbin:/sbin:$PATH"

HOST="$(hostname -s)"
CPUS="$(nproc --all)"
# RealMemory must not exceed what slurmd detects, or the node is drained: take 90% of MemTotal.
MEM_TOTAL_MB=$(( $(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024 ))
REAL_MEM_MB=$(( MEM_TOTAL_MB * 9 / 10 ))

node_state() {
    # Prints the node's state (idle, mixed, alloc, down*, ...) or nothing when the cluster is not up.
    { timeout 5 sinfo --noheader --nodes="$HOST" --format='%T' 2>/dev/null || true; } | head -n1 | tr -d ' '
}

is_ready() {
    case "$(node_state)" in
        idle|mixed|allocated|alloc|completing) return 0 ;;
        *) return 1 ;;
    esac
}

if is_ready && grep -q "^NodeName=$HOST " "$CONF" 2>/dev/null; then
    log "cluster already up: node $HOST is $(node_state)"
    exit 0
fi

# --- configuration --------------------------------------------------------------------------
mkdir -p "$CONF_DIR" /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/slurm
NEW_CONF="$(mktemp)"
cat > "$NEW_CONF" <<EOF
# Written by tcsexam .ci/start-slurm.sh: a one-node cluster on localhost.
ClusterName=tcsexam
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
MinJobAge=3600
SchedulerType=sched/backfill
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
Waittime=0
DefMemPerCPU=$(( REAL_MEM_MB / CPUS ))
NodeName=$HOST CPUs=$CPUS RealMemory=$REAL_MEM_MB State=UNKNOWN
PartitionName=main Nodes=$HOST Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
CHANGED=1
if [ -f "$CONF" ] && cmp -s "$NEW_CONF" "$CONF"; then
    CHANGED=0
    rm -f "$NEW_CONF"
else
    mv "$NEW_CONF" "$CONF"
    chmod 644 "$CONF"
fi

# --- munge ----------------------------------------------------------------------------------
mkdir -p /etc/munge /run/munge /var/lib/munge /var/log/munge
if [ ! -s /etc/munge/munge.key ]; then
    if command -v mungekey >/dev/null 2>&1; then
        mungekey -c -f -k /etc/munge/munge.key
    else
        dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
    fi
fi
chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge
chmod 700 /etc/munge
chmod 400 /etc/munge/munge.key
chmod 755 /run/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    log "starting munged"
    runuser -u munge -- munged --force
    for _ in $(seq 1 20); do
        munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
        sleep 0.25
    done
    munge -n | unmunge >/dev/null || die "munged does not answer (see /var/log/munge/munged.log)"
fi

# --- slurm daemons ---------------------------------------------------------------------------
pid_alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop_pidfile() {
    local pidfile="$1"
    if pid_alive "$pidfile"; then
        local pid
        pid="$(cat "$pidfile")"
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    fi
    rm -f "$pidfile"
}

if [ "$CHANGED" -eq 1 ]; then
    # A new configuration: restart whatever this script started before with the old one.
    stop_pidfile /run/slurm/slurmd.pid
    stop_pidfile /run/slurm/slurmctld.pid
fi

if ! pid_alive /run/slurm/slurmctld.pid; then
    log "starting slurmctld (node $HOST: $CPUS CPUs, ${REAL_MEM_MB} MB)"
    slurmctld
fi
if ! pid_alive /run/slurm/slurmd.pid; then
    log "starting slurmd"
    slurmd
fi

# --- wait until the node is idle ----------------------------------------------------------------
deadline=$(( $(date +%s) + TIMEOUT ))
while ! is_ready; do
    state="$(node_state)"
    case "$state" in
        down*|drain*|fail*)
            # ReturnToService=2 normally revives it; nudge it once it registered.
            scontrol update nodename="$HOST" state=resume >/dev/null 2>&1 || true ;;
    esac
    if [ "$(date +%s)" -ge "$deadline" ]; then
        echo "start-slurm: ERROR: node $HOST not idle after ${TIMEOUT}s (state: '${state:-no answer}')" >&2
        echo "--- sinfo ---" >&2; sinfo -N -l >&2 2>&1 || true
        echo "--- slurmctld.log (tail) ---" >&2; tail -n 30 /var/log/slurm/slurmctld.log >&2 2>/dev/null || true
        echo "--- slurmd.log (tail) ---" >&2; tail -n 30 /var/log/slurm/slurmd.log >&2 2>/dev/null || true
        exit 1
    fi
    sleep 1
done
log "cluster up: node $HOST is $(node_state)"
