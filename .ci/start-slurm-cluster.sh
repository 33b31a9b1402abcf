#!/usr/bin/env bash
# A multi-node SLURM test cluster on one machine: one slurmctld on the host (the "login node") and
# N compute nodes, each slurmd in its own network, UTS, mount and PID namespaces, so that each node
# is a machine of its own as far as the code under test can tell:
#
#   - its own hostname (tcsnode1, tcsnode2, ...) and address on a bridge (10.77.0.11, .12, ...;
#     the host is 10.77.0.1 on it), its own /etc/hosts;
#   - private /tmp, /var/tmp, /dev/shm, /run/slurm, SLURM spool and log folders (per-machine state:
#     Ray's session folders, the harness's interpreter views, scratch and ownership folders);
#   - its own process table (a PID namespace: "is that pid alive" answers for this node only), so
#     stopping a node (`stop-node`) is a power cut: every process on it dies at once;
#   - the rest of the host's file system as the shared one (the checkout, the venv, the results).
#     Workspaces the nodes must see cannot live under /tmp: use the shared folder the cluster
#     description names (`shared`, /var/lib/tcsexam-cluster/shared).
#
# Why namespaces and not SLURM's multiple-slurmd mode (`slurmd -N`, one host, NodeName/Port per
# node): those slurmds share the hostname, /tmp and the process table, i.e. exactly what hides the
# faults a second machine shows (docs/workflow.md, "A multi-node test cluster").
#
# It runs beside the one-node cluster of .ci/start-slurm.sh (its own configuration, controller port
# 6819, state folders): clients reach it with SLURM_CONF=/etc/tcsexam-cluster/slurm.conf. It writes
# /etc/tcsexam-cluster/cluster.json (the description tests and `tcsexam plan` read).
#
# Usage (root):  start-slurm-cluster.sh [start]      configure and start, wait until all nodes idle
#                start-slurm-cluster.sh stop         stop the nodes and the controller, remove the net
#                start-slurm-cluster.sh stop-node N  power a node off (SIGKILL to its PID namespace)
#                start-slurm-cluster.sh start-node N power it on again (it rejoins: ReturnToService=2)
#                start-slurm-cluster.sh status       sinfo of the cluster
# Environment:   TCSEXAM_CLUSTER_NODES (default 2), TCSEXAM_CLUSTER_CPUS (CPUs per node, default
#                nproc / nodes, at least 1), TCSEXAM_CLUSTER_SUBNET (default 10.77.0),
#                SLURM_START_TIMEOUT (default 60 s).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
NODES="${TCSEXAM_CLUSTER_NODES:-2}"
SUBNET="${TCSEXAM_CLUSTER_SUBNET:-10.77.0}"
TIMEOUT="${SLURM_START_TIMEOUT:-60}"
CONF_DIR=/etc/tcsexam-cluster
CONF="$CONF_DIR/slurm.conf"
STATE=/var/lib/tcsexam-cluster
BRIDGE=tcsbr0
CTLD_PORT=6819
export SLURM_CONF="$CONF"
export PATH="/usr/sbin:/sbin:$PATH"

log() { echo "start-slurm-cluster: $*" >&2; }
die() { echo "start-slurm-cluster: ERROR: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (it creates network namespaces and starts daemons)"
for bin in munged slurmctld slurmd sinfo scontrol ip unshare nsenter; do
    command -v "$bin" >/dev/null 2>&1 || die "$bin not installed (apt-get install munge slurmctld slurmd slurm-client iproute2 util-linux)"
done
[ "$NODES" -ge 2 ] 2>/dev/null || die "TCSEXAM_CLUSTER_NODES must be a number >= 2 (got '$NODES')"

HOST="$(hostname -s)"
CPUS_TOTAL="$(nproc --all)"
CPUS="${TCSEXAM_CLUSTER_CPUS:-$(( CPUS_TOTAL / NODES > 0 ? CPUS_TOTAL / NODES : 1 ))}"
MEM_TOTAL_MB=$(( $(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024 ))
# each node reports the whole machine's memory; RealMemory below that keeps it from being drained
NODE_MEM_MB=$(( MEM_TOTAL_MB * 9 / 10 / NODES ))
node_name() { echo "tcsnode$1"; }
node_addr() { echo "$SUBNET.$(( 10 + $1 ))"; }
NODELIST="tcsnode[1-$NODES]"

node_index() {
    local name="$1"
    [[ "$name" =~ ^tcsnode([0-9]+)$ ]] || die "no such node: '$name' (tcsnode1 .. tcsnode$NODES)"
    local i="${BASH_REMATCH[1]}"
    { [ "$i" -ge 1 ] && [ "$i" -le "$NODES" ]; } || die "no such node: '$name' (tcsnode1 .. tcsnode$NODES)"
    echo "$i"
}

pid_alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

node_states() { timeout 5 sinfo --noheader --Node --format='%N %T' 2>/dev/null || true; }

state_of() { node_states | awk -v n="$1" '$1 == n {print $2; exit}'; }

usable() {
    case "$1" in idle|mixed|allocated|alloc|completing) return 0 ;; *) return 1 ;; esac
}

write_conf() {
    mkdir -p "$CONF_DIR" "$STATE/ctld" "$STATE/shared" /var/log/tcsexam-cluster /run/tcsexam-cluster
    chmod 1777 "$STATE/shared"
    local new
    new="$(mktemp)"
    cat > "$new" <<EOF
# Written by tcsexam .ci/start-slurm-cluster.sh: $NODES nodes in namespaces on $HOST.
ClusterName=tcsexam-multi
SlurmctldHost=$HOST($SUBNET.1)
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
# like many sites: a job on a failed node is not requeued by SLURM (Snakemake retries it)
JobRequeue=0
MinJobAge=3600
SchedulerType=sched/backfill
SlurmctldPort=$CTLD_PORT
SlurmdPort=6818
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/tcsexam-cluster/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=/var/log/tcsexam-cluster/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
# a powered-off node is noticed within seconds (the node-loss test waits for it)
SlurmctldTimeout=30
SlurmdTimeout=10
InactiveLimit=0
KillWait=5
Waittime=0
DefMemPerCPU=$(( NODE_MEM_MB / CPUS ))
EOF
    local i
    for i in $(seq 1 "$NODES"); do
        echo "NodeName=$(node_name "$i") NodeAddr=$(node_addr "$i") NodeHostname=$(node_name "$i") CPUs=$CPUS RealMemory=$NODE_MEM_MB State=UNKNOWN" >> "$new"
    done
    echo "PartitionName=main Nodes=$NODELIST Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO" >> "$new"
    if [ -f "$CONF" ] && cmp -s "$new" "$CONF"; then
        rm -f "$new"
        return 1
    fi
    mv "$new" "$CONF"
    chmod 644 "$CONF"
    # /etc/hosts of the nodes: every node and the controller by name
    {
        echo "127.0.0.1 localhost"
        echo "$SUBNET.1 $HOST"
        for i in $(seq 1 "$NODES"); do echo "$(node_addr "$i") $(node_name "$i")"; done
    } > "$CONF_DIR/hosts"
    # the description tests and `tcsexam plan --cluster` read
    {
        printf '{\n  "name": "tcsexam-multi",\n  "slurm_conf": "%s",\n  "controller": "%s",\n' "$CONF" "$HOST"
        printf '  "shared": "%s",\n  "cores_per_node": %s,\n  "mem_mb_per_node": %s,\n  "nodes": [' "$STATE/shared" "$CPUS" "$NODE_MEM_MB"
        for i in $(seq 1 "$NODES"); do
            [ "$i" -gt 1 ] && printf ','
            printf '\n    {"name": "%s", "addr": "%s", "tmp": "%s"}' "$(node_name "$i")" "$(node_addr "$i")" "$STATE/nodes/$(node_name "$i")/tmp"
        done
        printf '\n  ]\n}\n'
    } > "$CONF_DIR/cluster.json"
    return 0
}

start_munge() {
    mkdir -p /etc/munge /run/munge /var/lib/munge /var/log/munge
    if [ ! -s /etc/munge/munge.key ]; then
        if command -v mungekey >/dev/null 2>&1; then mungekey -c -f -k /etc/munge/munge.key
        else dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none; fi
    fi
    chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge
    chmod 700 /etc/munge; chmod 400 /etc/munge/munge.key; chmod 755 /run/munge
    if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
        log "starting munged"
        runuser -u munge -- munged --force
        for _ in $(seq 1 20); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.25; done
        munge -n | unmunge >/dev/null || die "munged does not answer (see /var/log/munge/munged.log)"
    fi
}

setup_bridge() {
    if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
        ip link add "$BRIDGE" type bridge
    fi
    ip addr show dev "$BRIDGE" | grep -q "inet $SUBNET.1/24" || ip addr add "$SUBNET.1/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
    # node to node across the bridge: where bridged traffic passes iptables (br_netfilter) and a
    # Docker engine sets FORWARD's policy to DROP, let the cluster's own traffic through
    if command -v iptables >/dev/null 2>&1 && ! iptables -C FORWARD -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT 2>/dev/null; then
        iptables -I FORWARD -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT 2>/dev/null || true
    fi
}

setup_netns() {
    local i="$1" name addr
    name="$(node_name "$i")"; addr="$(node_addr "$i")"
    ip netns list | grep -qw "^$name" || ip netns add "$name"
    if ! ip -n "$name" link show eth0 >/dev/null 2>&1; then
        ip link del "veth-$name" >/dev/null 2>&1 || true
        ip link add "veth-$name" type veth peer name eth0 netns "$name"
        ip link set "veth-$name" master "$BRIDGE" up
        ip -n "$name" addr add "$addr/24" dev eth0
    fi
    ip -n "$name" link set lo up
    ip -n "$name" link set eth0 up
    # a default route through the host: software that finds "its" address by routing towards the
    # internet (Ray does) gets the node's address, as on a real machine
    ip -n "$name" route replace default via "$SUBNET.1"
}

node_pidfile() { echo "/run/tcsexam-cluster/$1.pid"; }

start_node() {
    local i="$1" name dir
    name="$(node_name "$i")"
    dir="$STATE/nodes/$name"
    if pid_alive "$(node_pidfile "$name")"; then return 0; fi
    setup_netns "$i"
    mkdir -p "$dir"/{tmp,var-tmp,run-slurm,spool,log}
    chmod 1777 "$dir/tmp" "$dir/var-tmp"
    log "starting $name ($(node_addr "$i"), $CPUS CPUs, ${NODE_MEM_MB} MB)"
    # unshare --kill-child: when the unshare process dies, the node's init (pid 1 of its PID
    # namespace) gets SIGKILL, and with it every process of the node
    setsid nsenter --net="/run/netns/$name" unshare --uts --mount --pid --fork --mount-proc --propagation private --kill-child \
        bash "$HERE/slurm-node-init.sh" "$name" "$dir" "$CONF" "$CONF_DIR/hosts" \
        > "/var/log/tcsexam-cluster/$name.console.log" 2>&1 < /dev/null &
    echo "$!" > "$(node_pidfile "$name")"
}

stop_node() {
    local name="$1" pidfile pid
    pidfile="$(node_pidfile "$name")"
    if pid_alive "$pidfile"; then
        pid="$(cat "$pidfile")"
        local init
        init="$(pgrep -P "$pid" || true)"
        kill -KILL "$pid" 2>/dev/null || true
        [ -n "$init" ] && kill -KILL "$init" 2>/dev/null || true
        for _ in $(seq 1 40); do
            kill -0 "$pid" 2>/dev/null || { [ -n "$init" ] && kill -0 "$init" 2>/dev/null; } || break
            sleep 0.25
        done
        log "stopped $name (power cut: its PID namespace is gone)"
    fi
    rm -f "$pidfile"
}

wait_ready() {
    local want="$1" deadline state bad
    deadline=$(( $(date +%s) + TIMEOUT ))
    while :; do
        bad=""
        for name in $want; do
            state="$(state_of "$name")"
            if ! usable "$state"; then
                bad="$bad $name:${state:-no-answer}"
                case "$state" in
                    down*|drain*|fail*) scontrol update nodename="$name" state=resume >/dev/null 2>&1 || true ;;
                esac
            fi
        done
        [ -z "$bad" ] && return 0
        if [ "$(date +%s)" -ge "$deadline" ]; then
            echo "start-slurm-cluster: ERROR: not idle after ${TIMEOUT}s:$bad" >&2
            sinfo -N -l >&2 2>&1 || true
            tail -n 30 /var/log/tcsexam-cluster/slurmctld.log >&2 2>/dev/null || true
            for name in $want; do
                echo "--- $name ---" >&2
                tail -n 20 "$STATE/nodes/$name/log/slurmd.log" "/var/log/tcsexam-cluster/$name.console.log" >&2 2>/dev/null || true
            done
            exit 1
        fi
        sleep 1
    done
}

all_nodes() { for i in $(seq 1 "$NODES"); do node_name "$i"; done; }

cmd_start() {
    local changed=0
    write_conf && changed=1
    start_munge
    setup_bridge
    if [ "$changed" -eq 1 ]; then
        for name in $(all_nodes); do stop_node "$name"; done
        if pid_alive /run/tcsexam-cluster/slurmctld.pid; then
            kill "$(cat /run/tcsexam-cluster/slurmctld.pid)" 2>/dev/null || true
            sleep 1
        fi
    fi
    if ! pid_alive /run/tcsexam-cluster/slurmctld.pid; then
        log "starting slurmctld on $HOST ($SUBNET.1:$CTLD_PORT)"
        slurmctld -f "$CONF"
    fi
    for i in $(seq 1 "$NODES"); do start_node "$i"; done
    wait_ready "$(all_nodes)"
    log "cluster up (SLURM_CONF=$CONF):"
    sinfo -N >&2
}

cmd_stop() {
    for name in $(all_nodes); do stop_node "$name"; done
    if pid_alive /run/tcsexam-cluster/slurmctld.pid; then
        local pid
        pid="$(cat /run/tcsexam-cluster/slurmctld.pid)"
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
        log "stopped slurmctld"
    fi
    for name in $(all_nodes); do
        ip link del "veth-$name" >/dev/null 2>&1 || true
        ip netns del "$name" >/dev/null 2>&1 || true
    done
    ip link del "$BRIDGE" >/dev/null 2>&1 || true
}

case "${1:-start}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    stop-node) stop_node "$(node_name "$(node_index "${2:?stop-node needs a node name}")")" ;;
    start-node)
        i="$(node_index "${2:?start-node needs a node name}")"
        start_node "$i"
        wait_ready "$(node_name "$i")" ;;
    status) sinfo -N -l ;;
    *) die "unknown command '$1' (start, stop, stop-node NODE, start-node NODE, status)" ;;
esac
