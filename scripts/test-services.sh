#!/usr/bin/env bash
# The services the test suite talks to, made ready by `npm test`'s setup (scripts/setup.sh with
# QUIRE_SETUP_TEST=1): PostgreSQL on 127.0.0.1:5432 (user postgres, no password), Redis on
# 127.0.0.1:6379 and the S3 gateway (scripts/ceph-rgw.sh). Each is looked at first and only
# installed or started when it does not answer, so on a ready machine this costs a fraction of
# a second. Installing and starting need root: run as another user, it prints the exact
# commands and stops. QUIRE_TEST_PG / QUIRE_TEST_REDIS naming another host: that server is
# the operator's, and is only looked at.
set -euo pipefail
cd "$(dirname "$0")/.."

PG_URL="${QUIRE_TEST_PG:-postgres://postgres@127.0.0.1:5432/postgres}"
REDIS_URL="${QUIRE_TEST_REDIS:-redis://127.0.0.1:6379}"
LOCAL_PG='postgres://postgres@127.0.0.1:5432/postgres'
LOCAL_REDIS='redis://127.0.0.1:6379'
say() { echo "quire test services: $*" >&2; }
root() { [ "$(id -u)" = 0 ]; }

# A query as the suite makes it (no password): the server answers and lets postgres in.
pg_answers() {
  command -v psql >/dev/null && psql "$PG_URL" -w -Atqc 'select 1' >/dev/null 2>&1
}

# PING over the protocol itself: no redis-cli needed for a Redis that is not ours.
redis_answers() {
  local hostport=${REDIS_URL#redis://} reply
  hostport=${hostport%%/*}
  reply=$( (exec 3<>"/dev/tcp/${hostport%:*}/${hostport##*:}" && printf 'PING\r\n' >&3 && read -r -t 2 line <&3 && echo "$line") 2>/dev/null || true)
  [ "${reply%$'\r'}" = '+PONG' ]
}

rgw_answers() {
  local port="${QUIRE_CEPH_RGW_PORT:-7480}"
  command -v curl >/dev/null && curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$port/" 2>/dev/null | grep -q '^200$'
}

apt_install() {
  say "installing $* (apt-get; a minute or two on a fresh machine)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "$@" >/dev/null
}

# A Debian cluster that was just installed lets postgres in over TCP only with a password; the
# suite's test machine lets it in without one, on 127.0.0.1 only.
pg_trust_local() {
  local hba
  hba=$(ls /etc/postgresql/*/main/pg_hba.conf | head -1)
  grep -q '^# quire test' "$hba" && return 0
  say "letting postgres connect from 127.0.0.1 without a password ($hba)"
  { echo '# quire test (scripts/test-services.sh): the suite connects as postgres@127.0.0.1 without a password'
    echo 'host all postgres 127.0.0.1/32 trust'
    cat "$hba"; } >"$hba.quire" && mv "$hba.quire" "$hba"
  chown postgres:postgres "$hba"
}

pg_start() {
  local version
  version=$(ls /etc/postgresql | sort -V | tail -1)
  if ! pg_ctlcluster "$version" main status >/dev/null 2>&1; then
    say "starting PostgreSQL $version"
    pg_ctlcluster --skip-systemctl-redirect "$version" main start
  else
    pg_ctlcluster --skip-systemctl-redirect "$version" main reload
  fi
  for _ in $(seq 30); do pg_answers && return 0; sleep 1; done
  say "PostgreSQL $version does not answer on $PG_URL (see /var/log/postgresql/)"
  return 1
}

redis_start() {
  say "starting Redis on 127.0.0.1:6379"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no --dir /var/lib/redis --logfile /var/log/redis/quire-test.log
  for _ in $(seq 30); do redis_answers && return 0; sleep 1; done
  say "Redis does not answer on 127.0.0.1:6379 (see /var/log/redis/quire-test.log)"
  return 1
}

# What is missing, as the commands that make it ready (for a user who is not root).
todo=()
pg_ok=1 redis_ok=1 rgw_ok=1
pg_answers || pg_ok=0
redis_answers || redis_ok=0
rgw_answers || rgw_ok=0
[ $((pg_ok + redis_ok + rgw_ok)) = 3 ] && exit 0

if [ "$pg_ok" = 0 ] && [ "$PG_URL" != "$LOCAL_PG" ]; then
  say "PostgreSQL at QUIRE_TEST_PG=$PG_URL does not answer (it is not this script's to start)"
  exit 1
fi
if [ "$redis_ok" = 0 ] && [ "$REDIS_URL" != "$LOCAL_REDIS" ]; then
  say "Redis at QUIRE_TEST_REDIS=$REDIS_URL does not answer (it is not this script's to start)"
  exit 1
fi

if ! root; then
  [ "$pg_ok" = 0 ] && todo+=("sudo apt-get install -y postgresql && sudo pg_ctlcluster --skip-systemctl-redirect \$(ls /etc/postgresql | sort -V | tail -1) main start  # and in pg_hba.conf: host all postgres 127.0.0.1/32 trust")
  [ "$redis_ok" = 0 ] && todo+=("sudo apt-get install -y redis-server && sudo redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no")
  [ "$rgw_ok" = 0 ] && todo+=("sudo scripts/ceph-rgw.sh start")
  say "the suite needs services that are not running; as root, run:"
  for line in "${todo[@]}"; do echo "  $line" >&2; done
  say "(or run npm test as root, which does it)"
  exit 1
fi

if [ "$pg_ok" = 0 ]; then
  fresh=0
  if ! command -v pg_ctlcluster >/dev/null || [ -z "$(ls /etc/postgresql 2>/dev/null)" ]; then
    apt_install postgresql
    fresh=1
  fi
  [ "$fresh" = 1 ] && pg_trust_local
  pg_start || {
    [ "$fresh" = 1 ] || say "a PostgreSQL that was here before refuses postgres@127.0.0.1 without a password: add 'host all postgres 127.0.0.1/32 trust' at the top of its pg_hba.conf, or point QUIRE_TEST_PG at one that lets it in"
    exit 1
  }
fi

if [ "$redis_ok" = 0 ]; then
  command -v redis-server >/dev/null || apt_install redis-server
  redis_start
fi

if [ "$rgw_ok" = 0 ]; then
  say "starting the S3 gateway (scripts/ceph-rgw.sh; installs Ceph when missing, about 20 s to start)"
  scripts/ceph-rgw.sh start >/dev/null
fi
