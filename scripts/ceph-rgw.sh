#!/usr/bin/env bash
# A real S3-compatible server for tests and CI, without Docker: a one-node Ceph cluster
# (monitor, one in-memory OSD) with the RADOS Gateway on 127.0.0.1:7480.
#
#   scripts/ceph-rgw.sh start   # idempotent: installs Ceph when missing, reuses a running gateway
#   scripts/ceph-rgw.sh env     # prints the export lines a client needs
#   scripts/ceph-rgw.sh stop    # stops the daemons this script started and removes their data
#
# Everything lives under QUIRE_CEPH_DIR (default /tmp/quire-ceph); the data is in memory
# (memstore), so a stop loses every object. Requires root (it installs packages and runs daemons).
set -euo pipefail

DIR="${QUIRE_CEPH_DIR:-/tmp/quire-ceph}"
PORT="${QUIRE_CEPH_RGW_PORT:-7480}"
MON_PORT="${QUIRE_CEPH_MON_PORT:-6789}"
ACCESS_KEY="quire-test-access"
SECRET_KEY="quire-test-secret-0123456789abcdef"
CONF="$DIR/ceph.conf"
ENDPOINT="http://127.0.0.1:$PORT"

print_env() {
  cat <<EOF
export AWS_ENDPOINT_URL_S3=$ENDPOINT
export AWS_ACCESS_KEY_ID=$ACCESS_KEY
export AWS_SECRET_ACCESS_KEY=$SECRET_KEY
export AWS_REGION=us-east-1
EOF
}

answers() {
  curl -s -o /dev/null -m 2 -w '%{http_code}' "$ENDPOINT/" 2>/dev/null | grep -q '^200$'
}

install_ceph() {
  local missing=()
  command -v ceph-mon >/dev/null || missing+=(ceph-mon)
  command -v ceph-osd >/dev/null || missing+=(ceph-osd)
  command -v radosgw >/dev/null || missing+=(radosgw)
  command -v ceph >/dev/null || missing+=(ceph-common)
  command -v curl >/dev/null || missing+=(curl)
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "ceph-rgw: installing ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
}

write_conf() {
  mkdir -p "$DIR"/{run,log,mon,osd,rgw}
  cat >"$CONF" <<EOF
[global]
fsid = $(cat /proc/sys/kernel/random/uuid)
mon host = [v1:127.0.0.1:$MON_PORT]
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
auth allow insecure global id reclaim = true
ms bind msgr2 = false
osd objectstore = memstore
memstore device bytes = 1073741824
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
run dir = $DIR/run
log file = $DIR/log/\$name.log
admin socket = $DIR/run/\$name.asok
pid file = $DIR/run/\$name.pid
mon data = $DIR/mon/\$name
osd data = $DIR/osd/\$name
keyring = $DIR/keyring
[client.rgw.a]
# Without tcp_nodelay every small GET waits ~40 ms for a delayed ACK (measured).
rgw frontends = beast endpoint=127.0.0.1:$PORT tcp_nodelay=1
rgw data = $DIR/rgw
rgw dns name = 127.0.0.1
EOF
  : >"$DIR/keyring"
}

ceph_() { ceph -c "$CONF" --connect-timeout 10 "$@"; }

start() {
  if answers; then print_env; return 0; fi
  # Two test runs starting at once: the second waits for the first, then reuses its gateway.
  exec 9>"${DIR%/}.lock"
  flock 9
  # The daemons below are started with the lock's descriptor closed (9>&-): a monitor left
  # running after a failed start would otherwise hold the lock for ever, and every later start
  # would wait on it.
  if answers; then print_env; return 0; fi
  install_ceph
  local began=$SECONDS attempt
  # A first start on a cold machine has failed once in a while (a daemon slow to come up);
  # a failed attempt is cleaned up completely and tried again before giving up.
  for attempt in 1 2 3; do
    # A child bash, so that set -e holds inside (it does not in an if's own condition).
    if bash "$0" _launch 9>&-; then
      echo "ceph-rgw: up on $ENDPOINT in $((SECONDS - began)) s" >&2
      print_env
      return 0
    fi
    echo "ceph-rgw: start attempt $attempt failed; the end of $DIR/log/start.log:" >&2
    tail -n 15 "$DIR/log/start.log" >&2 || true
    cp -r "$DIR/log" "${DIR%/}-failed-log" 2>/dev/null || true
  done
  stop_daemons
  echo "ceph-rgw: the gateway could not be started; logs of the last attempt in ${DIR%/}-failed-log" >&2
  exit 1
}

# Runs a step with its output kept in start.log, so that a failure says what failed and why.
step() {
  echo "+ $*" >>"$DIR/log/start.log"
  "$@" >>"$DIR/log/start.log" 2>&1 9>&-
}

# One attempt: a fresh cluster from nothing. Returns non-zero (set -e) on the first failing step.
launch() {
  stop_daemons
  free_ports
  rm -rf "$DIR"
  write_conf
  local fsid id uuid
  fsid=$(awk '/^fsid/{print $3}' "$CONF")
  step monmaptool --create --fsid "$fsid" --addv a "[v1:127.0.0.1:$MON_PORT]" "$DIR/monmap"
  mkdir -p "$DIR/mon/mon.a"
  step ceph-mon -c "$CONF" -i a --mkfs --monmap "$DIR/monmap"
  step timeout 60 ceph-mon -c "$CONF" -i a

  # The OSD is registered with the uuid it is made with: an OSD that boots with another uuid
  # than the monitor holds for its id is refused ('wrong fsid').
  uuid=$(cat /proc/sys/kernel/random/uuid)
  id=$(ceph_ osd create "$uuid" 2>>"$DIR/log/start.log")
  mkdir -p "$DIR/osd/osd.$id"
  step ceph-osd -c "$CONF" -i "$id" --mkfs --osd-uuid "$uuid"
  step ceph_ osd crush add-bucket node-a host
  step ceph_ osd crush move node-a root=default
  step ceph_ osd crush add "osd.$id" 1.0 host=node-a
  step timeout 120 ceph-osd -c "$CONF" -i "$id"

  step timeout 120 radosgw -c "$CONF" -n client.rgw.a
  for _ in $(seq 120); do answers && break; sleep 0.5; done
  if ! answers; then
    echo "the gateway did not answer on $ENDPOINT" >>"$DIR/log/start.log"
    return 1
  fi
  step radosgw-admin -c "$CONF" user create --uid=quire --display-name=Quire \
    --access-key="$ACCESS_KEY" --secret="$SECRET_KEY"
}

# A port held by a Ceph daemon is a test cluster left behind (a failed start, another
# QUIRE_CEPH_DIR): it is stopped. Any other holder is a real conflict, and the start fails.
free_ports() {
  local port pids pid comm
  # An OSD holds no fixed port; one of this folder's clusters is found by its config path.
  pkill -9 -f "^ceph-osd -c $CONF " 2>/dev/null || true
  for port in "$MON_PORT" "$PORT"; do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || continue
    pids=$(ss -ltnpH "sport = :$port" 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u)
    for pid in $pids; do
      comm=$(cat "/proc/$pid/comm" 2>/dev/null || true)
      case "$comm" in
        ceph-mon|ceph-osd|radosgw|msgr-worker-*)
          echo "ceph-rgw: stopping a stale $comm (pid $pid) on port $port" >&2
          kill "$pid" 2>/dev/null || true
          for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
          kill -9 "$pid" 2>/dev/null || true ;;
        *)
          echo "ceph-rgw: port $port is taken by $comm (pid $pid), not a Ceph daemon" >&2
          return 1 ;;
      esac
    done
    for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break; sleep 0.1; done
  done
}

stop_daemons() {
  local pidfile pid
  for pidfile in "$DIR"/run/client.rgw.a.pid "$DIR"/run/osd.*.pid "$DIR"/run/mon.a.pid; do
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$pidfile"
  done
}

case "${1:-}" in
  start) start ;;
  env) print_env ;;
  stop) stop_daemons; rm -rf "$DIR" ;;
  _launch) launch ;;
  *) echo "usage: $0 start|env|stop" >&2; exit 2 ;;
esac
