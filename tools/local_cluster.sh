# A local jobsetd and N jobset-agents on 127.0.0.1, for tools/demo and the end-to-end shell
# tests. Source it, set BIN (a directory holding scheduler/jobsetd, agent/jobset-agent,
# agent/runtime/jobset-pod-shim and cli/jobsetctl) and CLUSTER_DIR, then:
#
#   AGENT_FLAGS="--metrics_listen=127.0.0.1:0"   # optional, for every agent
#   cluster_start 4 [jobsetd flags...]   # node-1..N at 127.0.0.2.., odd/even halves as
#                                        # slice-a / slice-b (cloud.google.com/gke-nodepool),
#                                        # cpu=1 each; sets SERVER and
#                                        # CONFIG (jobsetd's admin.conf)
#   ctl get nodes                        # jobsetctl against it, as the admin
#
# Secure as on real hosts: jobsetd serves TLS, the agents join with its join token
# ($CLUSTER_DIR/jobsetd/join-token) and connect with their node certificates, and
# jobsetctl uses the admin.conf jobsetd wrote.
#   cluster_stop                         # deletes every JobSet (their pods stop), then
#                                        # SIGTERMs what cluster_start started
#   own_checkpoints EXAMPLE              # EXAMPLE (examples/slices-restart.yaml) rewritten
#                                        # to checkpoint under $CLUSTER_DIR/checkpoints;
#                                        # prints the copy's path
#
# With several jobsetd replicas on etcd (tools/demo --ha; source local-etcd's env first for
# ETCD_ENDPOINTS, ETCD_CAFILE, ETCD_CERTFILE, ETCD_KEYFILE):
#   ha_cluster_start 3 4 [jobsetd flags...]  # replica-1 (it leads) and replica-2, -3
#                                        # (following), each with a data dir of its own and
#                                        # one --cluster_secret_file (the CA is in etcd,
#                                        # sealed with it), 4 agents given every replica;
#                                        # sets SERVER to the list, REPLICA_PIDS and
#                                        # REPLICA_ADDRS, and ctl goes to the list
#
# Only the pids this file started are ever signalled.

CLUSTER_PIDS=()
SERVER=""
CONFIG=""
CTL_SERVER=""
REPLICA_PIDS=()
REPLICA_ADDRS=()

ctl() { "$BIN/cli/jobsetctl" --config="$CONFIG" ${CTL_SERVER:+--server="$CTL_SERVER"} "$@"; }

# Tests run slices-restart side by side (and tools/demo runs it too): each checkpoints
# to a directory of its own, or one resumes from another's checkpoints and never fails.
own_checkpoints() {
  mkdir -p "$CLUSTER_DIR/checkpoints"
  # A hostPath volume written by the example's pods, which run as the agents'
  # default (non-root) pod user.
  chmod 0777 "$CLUSTER_DIR/checkpoints"
  sed "s|/tmp/jobsetd-example-checkpoints/demo|$CLUSTER_DIR/checkpoints|" "$1" \
    >"$CLUSTER_DIR/$(basename "$1")"
  echo "$CLUSTER_DIR/$(basename "$1")"
}

cluster_start() {
  local n=$1
  shift
  mkdir -p "$CLUSTER_DIR"
  "$BIN/scheduler/jobsetd" --listen=127.0.0.1:0 --data_dir="$CLUSTER_DIR/jobsetd" \
    --node_lost_timeout=5s --restart_grace=5s "$@" \
    >"$CLUSTER_DIR/jobsetd.out" 2>"$CLUSTER_DIR/jobsetd.err" &
  CLUSTER_PIDS+=($!)
  local _
  for _ in $(seq 1 200); do
    # jobsetd.out exists once the background job has opened it.
    SERVER=$(sed -n 's/^jobsetd serving on \([^ ]*\).*/\1/p' "$CLUSTER_DIR/jobsetd.out" \
      2>/dev/null || true)
    [ -n "$SERVER" ] && break
    sleep 0.1
  done
  if [ -z "$SERVER" ]; then
    echo "jobsetd did not start:" >&2
    cat "$CLUSTER_DIR/jobsetd.err" >&2
    return 1
  fi
  CONFIG="$CLUSTER_DIR/jobsetd/admin.conf"
  start_agents "$n" "$SERVER" "$CLUSTER_DIR/jobsetd/join-token"
}

# start_agents N SCHEDULER JOIN_TOKEN_FILE: node-1..N, then waits until all are Ready.
start_agents() {
  local n=$1 scheduler=$2 token=$3 i slice _
  for i in $(seq 1 "$n"); do
    slice=slice-a
    [ "$i" -gt $((n / 2)) ] && slice=slice-b
    "$BIN/agent/jobset-agent" --scheduler="$scheduler" --node_name="node-$i" \
      --address="127.0.0.$((i + 1))" --capacity=cpu=1,memory=2Gi \
      --labels="cloud.google.com/gke-nodepool=$slice" --work_dir="$CLUSTER_DIR/node-$i" \
      --shim="$BIN/agent/runtime/jobset-pod-shim" \
      --join_token_file="$token" ${AGENT_FLAGS:-} \
      >"$CLUSTER_DIR/node-$i.out" 2>"$CLUSTER_DIR/node-$i.err" &
    CLUSTER_PIDS+=($!)
  done
  for _ in $(seq 1 200); do
    [ "$(ctl get nodes 2>/dev/null | grep -c ' Ready')" -eq "$n" ] && return 0
    sleep 0.1
  done
  echo "the agents did not all register:" >&2
  ctl get nodes >&2
  return 1
}

# await_line FILE PREFIX: prints the rest of the first line of FILE starting with PREFIX
# (up to a space), waiting up to 20 s; fails if none came.
await_line() {
  local _ got
  for _ in $(seq 1 200); do
    got=$(sed -n "s/^$2\([^ ]*\).*/\1/p" "$1" 2>/dev/null | head -1)
    [ -n "$got" ] && { echo "$got"; return 0; }
    sleep 0.1
  done
  return 1
}

ha_cluster_start() {
  local replicas=$1 n=$2 i addr
  shift 2
  mkdir -p "$CLUSTER_DIR"
  # Every replica is given the same secret: the first seals the cluster CA's key with it
  # into etcd, the others take the CA from there and issue their own serving certificates.
  (umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$CLUSTER_DIR/cluster-secret")
  for i in $(seq 1 "$replicas"); do
    "$BIN/scheduler/jobsetd" --listen=127.0.0.1:0 --data_dir="$CLUSTER_DIR/replica-$i" \
      --cluster_secret_file="$CLUSTER_DIR/cluster-secret" \
      --store=etcd --etcd_endpoints="$ETCD_ENDPOINTS" --etcd_cafile="$ETCD_CAFILE" \
      --etcd_certfile="$ETCD_CERTFILE" --etcd_keyfile="$ETCD_KEYFILE" \
      --node_lost_timeout=10s --restart_grace=10s "$@" \
      >"$CLUSTER_DIR/replica-$i.out" 2>"$CLUSTER_DIR/replica-$i.err" &
    CLUSTER_PIDS+=($!)
    REPLICA_PIDS+=($!)
    if [ "$i" = 1 ]; then
      addr=$(await_line "$CLUSTER_DIR/replica-$i.out" "jobsetd serving on ") || {
        echo "jobsetd replica-1 did not start:" >&2
        cat "$CLUSTER_DIR/replica-$i.err" >&2
        return 1
      }
    else
      addr=$(await_line "$CLUSTER_DIR/replica-$i.out" "jobsetd follower on ") || {
        echo "jobsetd replica-$i did not start:" >&2
        cat "$CLUSTER_DIR/replica-$i.err" >&2
        return 1
      }
    fi
    REPLICA_ADDRS+=("$addr")
  done
  SERVER=$(IFS=,; echo "${REPLICA_ADDRS[*]}")
  CTL_SERVER="https://${SERVER//,/,https://}"
  CONFIG="$CLUSTER_DIR/replica-1/admin.conf"
  start_agents "$n" "$SERVER" "$CLUSTER_DIR/replica-1/join-token"
}

cluster_stop() {
  if [ -n "$SERVER" ]; then
    local name _
    for name in $(ctl get jobsets -o name 2>/dev/null); do
      ctl delete jobset "${name##*/}" >/dev/null 2>&1
    done
    # Their agents stop the pods and forget them.
    for _ in $(seq 1 100); do
      [ -z "$(find "$CLUSTER_DIR"/node-*/pods -mindepth 1 -maxdepth 1 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
  local pid
  for pid in "${CLUSTER_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${CLUSTER_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
  CLUSTER_PIDS=()
  REPLICA_PIDS=()
  REPLICA_ADDRS=()
  SERVER=""
  CONFIG=""
  CTL_SERVER=""
}
