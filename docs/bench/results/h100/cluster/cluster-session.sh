#!/bin/bash
# Issue 16's throughput goal on the device host's CPUs: PostgreSQL 15 (Debian's, carried),
# the cluster benchmark (benches/cluster.rs, stripped) and egsolve at the path compiled in.
set -u
C=$PWD/.carry
echo "== machine"; head -3 /etc/os-release; id; nproc; uptime
tar -C / -xzf $C/pg.tar.gz
mkdir -p /opt/pgall /opt/pglibs && tar -C /opt/pgall -xzf $C/libs.tar.gz
for round in 1 2 3 4 5; do
  missing=$(ldd /usr/lib/postgresql/15/bin/postgres /usr/lib/postgresql/15/bin/initdb /usr/lib/postgresql/15/lib/plpgsql.so 2>/dev/null | awk '/not found/{print $1}' | sort -u)
  [ -z "$missing" ] && break
  echo "missing: $missing"
  for m in $missing; do cp /opt/pgall/libs/$m /opt/pglibs/ 2>/dev/null || echo "not carried: $m"; done
  echo /opt/pglibs > /etc/ld.so.conf.d/zz-egsolve-pg.conf; ldconfig
done
ldd /usr/lib/postgresql/15/bin/postgres | grep "not found"
id nobody; which runuser
mkdir -p /work/main/target/release && cp $C/egsolve /work/main/target/release/egsolve
chmod -R a+rX /usr/lib/postgresql /usr/share/postgresql
export GIT_COMMIT=${GIT_COMMIT:-unknown} BENCH_JSON=$OUT/cluster.jsonl
cd /tmp
echo "== throughput"
ONLY=throughput WORKERS=${WORKERS:-1,2,4,8} JOBS=${JOBS:-48} timeout 400 $C/cluster --bench
echo "rc=$?"
echo "== latency"
ONLY=latency SAMPLES=200 timeout 100 $C/cluster --bench
echo "rc=$?"
uptime
