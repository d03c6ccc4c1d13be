#!/bin/bash
# Connection placement A/B (issue 16): broker CPU per message (utime+stime of the broker process,
# /proc/PID/stat) for --connection-placement main and shards, alternating, in one sitting:
#   produce:  librdkafka's producer (../shared/peers/rdkafka-producer-bench.c), N x 1 KiB, acks=1;
#   catch-up: kcat reading back M of them from the page cache.
# Each run starts a fresh broker (--flush never) on 127.0.0.1 in a temp dir, removed after.
# Usage: bash bench/placement.sh [RUNS=3] [SHARDS=2] [PARTITIONS=4] [N=1000000] [M=500000]
# Needs: npm run build, cc + librdkafka-dev, kcat. Prints one line per run; take medians.
set -euo pipefail
RUNS=${1:-3}; SHARDS=${2:-2}; PARTS=${3:-4}; N=${4:-1000000}; M=${5:-500000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PEERS=${SLUICE_PEERS_DIR:-$ROOT/../shared/peers}
WORK=$(mktemp -d /tmp/sluice-placement-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cc -O2 -o "$WORK/rdk" "$PEERS/rdkafka-producer-bench.c" -lrdkafka
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

run() { # placement
  local data="$WORK/data-$1" pid port t0 t1 c0 c1 c2 c3 rate
  mkdir -p "$data"
  node "$ROOT/dist/src/cli/main.js" start --data-dir "$data" --kafka-addr 127.0.0.1:0 --admin-addr 127.0.0.1:0 \
    --shards "$SHARDS" --num-partitions "$PARTS" --flush never --connection-placement "$1" > "$data/out.log" 2> "$data/err.log" &
  pid=$!
  for _ in $(seq 1 150); do grep -q "sluice ready" "$data/out.log" && break; sleep 0.2; done
  port=$(grep -o 'kafka=[^ ]*' "$data/out.log" | head -1 | sed 's/.*://')
  "$WORK/rdk" -b "127.0.0.1:$port" -t warm -n 2000 -a 1 > /dev/null 2>&1
  c0=$(cpu_ticks $pid)
  rate=$("$WORK/rdk" -b "127.0.0.1:$port" -t t1 -n "$N" -s 1024 -a 1 -l 5 2>/dev/null | grep -o '"msgs_s":[0-9]*' | cut -d: -f2)
  c1=$(cpu_ticks $pid)
  t0=$(date +%s.%N)
  kcat -C -b "127.0.0.1:$port" -t t1 -o beginning -c "$M" -q -f '%o\n' 2> /dev/null | wc -l > /dev/null
  t1=$(date +%s.%N)
  c2=$(cpu_ticks $pid)
  kill $pid; wait $pid 2> /dev/null || true
  rm -rf "$data"
  awk -v p="$1" -v r="$rate" -v n="$N" -v m="$M" -v a="$c0" -v b="$c1" -v c="$c2" -v t="$(echo "$t1 - $t0" | bc -l)" 'BEGIN {
    printf "%-6s produce %7d msg/s %5.2f us/msg | catch-up %5.0f MB/s %5.2f us/msg\n", p, r, (b - a) * 10000 / n, m * 1024 / 1e6 / t, (c - b) * 10000 / m }'
}

echo "shards=$SHARDS partitions=$PARTS produce=$N catch-up=$M runs=$RUNS"
for _ in $(seq 1 "$RUNS"); do run main; run shards; done
