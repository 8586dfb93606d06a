#!/bin/sh
# A throwaway one-node Slurm cluster for tests/test_study_slurm.cpp: munged, slurmctld and slurmd on localhost, one
# node of eight CPUs (whatever the machine has), everything they write (key, socket, state, spool, logs, pid files)
# inside one folder, nothing under /etc or /run, on ports nobody listens on (test runs on one machine never meet).
#
#   tests/slurm_one_node.sh start DIR   makes DIR (it must not exist), starts the daemons, waits until the node
#                                       takes jobs and prints DIR/slurm.conf: clients reach this cluster with
#                                       SLURM_CONF=DIR/slurm.conf
#   tests/slurm_one_node.sh stop DIR    cancels the jobs, stops the daemons it started (by their pid files), ends
#                                       what is left of the jobs, and removes DIR
#
# start exits 0 when the node is idle, 77 when Slurm cannot run here (not root, a program missing, the munge key
# not made, a daemon that does not come up in time), with the reason on the last line of stderr; it then leaves
# nothing running and nothing behind. Needs root (slurmd starts jobs as their user) and Debian's slurm-wlm and munge.
set -u
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
PATH="$PATH:/usr/sbin:/sbin"
marker=.slurm_one_node   # in DIR: stop removes only a folder start made

# Waits up to $1 seconds for the command after it to succeed.
wait_until() {
    limit=$1
    shift
    i=0
    while [ "$i" -lt $((limit * 10)) ]; do
        "$@" > /dev/null 2>&1 && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

# Prints the pid of daemon $1 if it runs: its pid file is in DIR, and the process is that daemon (not a reused pid).
daemon_pid() {
    pid=$(cat "$dir/$1.pid" 2> /dev/null) || return 1
    [ "$(cat "/proc/$pid/comm" 2> /dev/null)" = "$1" ] && echo "$pid"
}

# Is /proc/<pid> $1 this cluster's slurmstepd or one of its jobs' processes? Its environment names this cluster's
# slurm.conf (slurmstepd inherits slurmd's; a job's processes the submitter's, which sbatch passes on) and it is a
# slurmstepd or runs in a job (SLURM_JOB_ID): never this script, nor the test that called it.
left_by_a_job() {
    env=$(tr '\0' '\n' 2> /dev/null < "$1/environ") || return 1
    printf '%s\n' "$env" | grep -qx "SLURM_CONF=$dir/slurm.conf" || return 1
    [ "$(cat "$1/comm" 2> /dev/null)" = slurmstepd ] || printf '%s\n' "$env" | grep -q '^SLURM_JOB_ID='
}

stop() {
    [ -f "$dir/$marker" ] || return 0
    export SLURM_CONF="$dir/slurm.conf"
    # The jobs first, through Slurm (it ends their processes), while the daemons still run.
    if daemon_pid slurmctld > /dev/null && daemon_pid slurmd > /dev/null; then
        timeout 10 scancel --partition=test > /dev/null 2>&1
        wait_until 10 sh -c '[ -z "$(squeue -h)" ]'
    fi
    # All three at once (each takes a second or two to wind down); what has not ended in 5 s is killed.
    pids=
    for daemon in slurmd slurmctld munged; do
        pid=$(daemon_pid "$daemon") && kill "$pid" 2> /dev/null && pids="$pids $pid"
    done
    for pid in $pids; do
        wait_until 5 sh -c "! kill -0 $pid" || kill -9 "$pid" 2> /dev/null
    done
    for p in /proc/[0-9]*; do
        [ "${p#/proc/}" != $$ ] && left_by_a_job "$p" && kill -9 "${p#/proc/}" 2> /dev/null
    done
    rm -rf "$dir"
}

skip() {   # shows the daemons' last words, leaves nothing behind, and says why Slurm cannot run here
    for f in "$dir"/*.log "$dir"/*.out; do
        [ -s "$f" ] && { echo "== $f"; tail -n 15 "$f"; } >&2
    done
    stop
    echo "$1" >&2
    exit 77
}

# A TCP port nobody listens on (read from /proc/net/tcp*: no netstat or ss needed).
free_port() {
    while :; do
        port=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 40000))
        grep -qs ":$(printf '%04X' "$port") " /proc/net/tcp /proc/net/tcp6 || { echo "$port"; return; }
    done
}

case "$cmd" in
stop)
    [ -d "$dir" ] && dir=$(cd "$dir" && pwd) && stop
    exit 0
    ;;
start) ;;
*) echo "$0: unknown command '$cmd' (expected start or stop)" >&2; exit 2 ;;
esac

[ "$(id -u)" = 0 ] || { echo "not root: slurmd must run as root to start jobs" >&2; exit 77; }
for p in munged mungekey slurmctld slurmd sbatch squeue sinfo scontrol scancel; do
    command -v "$p" > /dev/null 2>&1 || { echo "$p not found (apt-get install slurm-wlm munge)" >&2; exit 77; }
done
[ ! -e "$dir" ] || { echo "$0: $dir exists (start makes a new folder)" >&2; exit 2; }
mkdir -p "$dir/state" "$dir/spool" || { echo "cannot make $dir" >&2; exit 77; }
dir=$(cd "$dir" && pwd)
touch "$dir/$marker"

mungekey --create --keyfile="$dir/munge.key" > "$dir/mungekey.out" 2>&1 || skip "the munge key cannot be made"
munged --socket="$dir/munge.socket" --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
       --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" --force > "$dir/munged.out" 2>&1 ||
    skip "munged does not start"
wait_until 10 test -S "$dir/munge.socket" || skip "munged made no socket in 10 s"

cat > "$dir/slurm.conf" << EOF
# Written by tests/slurm_one_node.sh: one node, no accounting, no cgroups.
ClusterName=classwise-test
SlurmctldHost=localhost
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# This cluster's own munged; cred_expire is also how long a requeued job waits before it may start again (120 s
# by default).
AuthInfo=socket=$dir/munge.socket,cred_expire=5
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
# Pending jobs are looked at every second, not every minute (a requeued job becomes eligible between events).
SchedulerParameters=sched_interval=1
ReturnToService=2
# Many clusters do not requeue a job unless it asks to (#SBATCH --requeue): nor does this one.
JobRequeue=0
# Ended jobs stay in squeue -t all long enough for the test to read their states.
MinJobAge=600
# Eight CPUs whatever the machine has (config_overrides: slurmd reports what is configured here, and the node is
# not drained for having fewer): every job whose dependencies allow it starts at once, so a dependency missing from
# the scripts shows (the job starts too early) instead of hiding behind jobs that wait for a free CPU.
SlurmdParameters=config_overrides
NodeName=localhost CPUs=8 State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$dir/slurm.conf"

slurmctld -i -f "$SLURM_CONF" > "$dir/slurmctld.out" 2>&1 || skip "slurmctld does not start"
wait_until 20 scontrol ping || skip "slurmctld does not answer in 20 s"
slurmd -f "$SLURM_CONF" -N localhost > "$dir/slurmd.out" 2>&1 || skip "slurmd does not start"
wait_until 30 sh -c 'sinfo -h -n localhost -o %T | grep -qx idle' || skip "the node is not idle after 30 s"
echo "$SLURM_CONF"
