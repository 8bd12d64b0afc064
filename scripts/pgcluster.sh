#!/usr/bin/env bash
# Starts or stops a throwaway PostgreSQL cluster for the test suite.
#   scripts/pgcluster.sh start DIR   → prints the URL on stdout (postgres://…)
#   scripts/pgcluster.sh stop DIR
# PostgreSQL refuses to run as root, so as root the cluster runs as the
# `postgres` OS user. It listens on a free loopback port only.
set -euo pipefail
# runuser and PostgreSQL's tools live in sbin dirs a user's PATH may lack.
export PATH="$PATH:/usr/sbin:/sbin"
cmd=${1:?start|stop}; dir=${2:?cluster dir}
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bindir" ] || { echo "pgcluster: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
case "$cmd" in
start)
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  as_pg "$bindir/initdb" -D "$dir/data" -U aos --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1 ||
    { echo "pgcluster: initdb failed:" >&2; tail -n 20 "$dir/initdb.log" >&2; exit 1; }
  as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c max_connections=300 -c fsync=on" start >"$dir/pg_ctl.log" 2>&1 ||
    { echo "pgcluster: the server did not start:" >&2; tail -n 20 "$dir/pg_ctl.log" "$dir/server.log" >&2 2>/dev/null; exit 1; }
  echo "$port" > "$dir/port"
  echo "postgres://aos@127.0.0.1:$port/postgres?sslmode=disable"
  ;;
stop)
  [ -d "$dir/data" ] && as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  ;;
restart)
  as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m fast -w -t 60 restart >/dev/null
  ;;
*) echo "usage: pgcluster.sh start|stop|restart DIR" >&2; exit 2 ;;
esac
