#!/usr/bin/env bash
# Live loopback uploads: `tputctl serve` + `tputctl send` against quinn's own
# `quinn-perf server` + `quinn-perf client` (the same QUIC stack underneath),
# run alternately, each end under /usr/bin/time. Prints goodput, CPU seconds
# per GB for each end and both, the smoothed RTT, and our/quinn ratios
# (medians over the runs).
#
# Usage:
#   benches/live/compare.sh QUINN_DIR [RUNS] [SECONDS] [CONNECTIONS] [CC]
#
#   QUINN_DIR    a checkout of https://github.com/quinn-rs/quinn; its perf tool
#                is built there with `cargo build --release -p perf` if missing
#   RUNS         alternating runs of each (default 3)
#   SECONDS      length of each upload (default 10)
#   CONNECTIONS  parallel connections, `tputctl send -P` and quinn-perf
#                clients (default 1)
#   CC           our controller: a spec from `tputctl cc list`
#                (default: tputctl's default); quinn-perf runs its default
#                (CUBIC) unless CC is newreno or cubic, which it also has
#
# Also `loopback`: with LOOPBACK=1, our side is `tputctl loopback` (server
# and client in one process, two threads) and its CPU is reported as both.
#
# Environment: TPUTCTL (default target/release/tputctl, built if missing),
# PORT (default 24433), MAX_MTU (our side's `--max-mtu` on both ends, e.g.
# 9000 to let path MTU discovery use loopback's large MTU; quinn-perf keeps
# its own default).
set -uo pipefail

QUINN_DIR=${1:?"usage: $0 QUINN_DIR [RUNS] [SECONDS] [CONNECTIONS] [CC]"}
RUNS=${2:-3}
SECS=${3:-10}
CONNS=${4:-1}
CC=${5:-}
PORT=${PORT:-24433}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TPUTCTL=${TPUTCTL:-$ROOT/target/release/tputctl}
PERF=$QUINN_DIR/target/release/quinn-perf
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"; kill $(jobs -p) 2>/dev/null || true' EXIT

[ -x /usr/bin/time ] || { echo "compare.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
[ -x "$TPUTCTL" ] || (cd "$ROOT" && cargo build --release -p tputctl) || exit 2
[ -x "$PERF" ] || (cd "$QUINN_DIR" && cargo build --release -p perf) || exit 2

# /usr/bin/time -f "%U %S %M" output: user, system seconds, max RSS (KiB).
cpu_of() { awk 'END { print $1 + $2 }' "$1"; }

ours() { # $1 = run number; prints "bytes server_cpu client_cpu srtt_ms"
    local out=$WORK/ours$1
    if [ "${LOOPBACK:-0}" = 1 ]; then
        /usr/bin/time -f "%U %S %M" -o "$out.ctime" "$TPUTCTL" loopback -t "$SECS" -P "$CONNS" ${CC:+--cc "$CC"} ${MAX_MTU:+--max-mtu "$MAX_MTU"} -J > "$out.json" 2> "$out.err"
        echo 0 0 0 > "$out.stime"
    else
        /usr/bin/time -f "%U %S %M" -o "$out.stime" "$TPUTCTL" serve --listen "127.0.0.1:$PORT" ${MAX_MTU:+--max-mtu "$MAX_MTU"} > "$out.serve" 2>&1 &
        local spid=$!
        local pin=""
        for _ in $(seq 100); do
            pin=$(awk '/certificate SHA-256/ { print $3 }' "$out.serve")
            [ -n "$pin" ] && break
            sleep 0.1
        done
        /usr/bin/time -f "%U %S %M" -o "$out.ctime" "$TPUTCTL" send "127.0.0.1:$PORT" --pin "$pin" -t "$SECS" -P "$CONNS" ${CC:+--cc "$CC"} ${MAX_MTU:+--max-mtu "$MAX_MTU"} -J > "$out.json" 2> "$out.err"
        kill -TERM $(pgrep -P $spid) 2>/dev/null || kill -TERM $spid
        wait $spid 2>/dev/null || true
    fi
    python3 - "$out.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
print(s["bytes"], end=" ")
srtt = [i["srtt_ms"] for t in d["transfers"] for i in t["intervals"] if i.get("srtt_ms")]
print(sorted(srtt)[len(srtt) // 2] if srtt else 0)
EOF
}

quinn() { # $1 = run number; prints "bytes srtt_ms"
    local out=$WORK/quinn$1
    local cong=""
    case "$CC" in newreno*) cong="--congestion new-reno" ;; cubic*) cong="--congestion cubic" ;; esac
    /usr/bin/time -f "%U %S %M" -o "$out.stime" "$PERF" server --listen "127.0.0.1:$PORT" $cong > "$out.serve" 2>&1 &
    local spid=$!
    sleep 0.5
    local cpids=()
    for c in $(seq "$CONNS"); do
        /usr/bin/time -f "%U %S %M" -o "$out.ctime$c" "$PERF" client "127.0.0.1:$PORT" --upload-size 1000G --download-size 0 \
            --duration "$SECS" --json "$out.json$c" --conn-stats $cong > "$out.client$c" 2>&1 &
        cpids+=($!)
    done
    wait "${cpids[@]}" || true
    kill -TERM $(pgrep -P $spid) 2>/dev/null || kill -TERM $spid
    wait $spid 2>/dev/null || true
    awk '{ u += $1; s += $2 } END { print u, s, 0 }' "$out".ctime* > "$out.ctime"
    python3 - "$out" "$CONNS" <<'EOF'
import json, re, sys
base, conns = sys.argv[1], int(sys.argv[2])
total = 0
for c in range(1, conns + 1):
    d = json.load(open(f"{base}.json{c}"))
    total += sum(i["sum"]["bytes"] for i in d["intervals"] if i["sum"].get("sender", True))
rtts = []
for c in range(1, conns + 1):
    m = re.findall(r"rtt: ([0-9.]+)(ms|µs|us|s)", open(f"{base}.client{c}").read())
    for v, u in m:
        rtts.append(float(v) * {"ms": 1, "µs": 1e-3, "us": 1e-3, "s": 1e3}[u])
print(total, sorted(rtts)[len(rtts) // 2] if rtts else 0)
EOF
}

printf "%-6s %-4s %12s %10s %10s %10s %10s\n" side run "Gbit/s" "srv s/GB" "cli s/GB" "both s/GB" "srtt ms"
: > "$WORK/rows"
for r in $(seq "$RUNS"); do
    for side in ours quinn; do
        read -r bytes srtt < <($side "$r")
        scpu=$(cpu_of "$WORK/$side$r.stime")
        ccpu=$(cpu_of "$WORK/$side$r.ctime")
        python3 - "$side" "$r" "$bytes" "$SECS" "$scpu" "$ccpu" "$srtt" <<'EOF' | tee -a "$WORK/rows"
import sys
side, run, b, secs, s, c, srtt = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:])
gb = max(b, 1) / 1e9
print(f"{side:<6} {run:<4} {b * 8 / secs / 1e9:12.3f} {s / gb:10.3f} {c / gb:10.3f} {(s + c) / gb:10.3f} {srtt:10.3f}")
EOF
    done
done
python3 - "$WORK/rows" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {}
for side in ("ours", "quinn"):
    cols = list(zip(*[list(map(float, r[2:])) for r in rows if r[0] == side]))
    med[side] = [statistics.median(c) for c in cols]
names = ["goodput Gbit/s", "server CPU-s/GB", "client CPU-s/GB", "both CPU-s/GB", "srtt ms"]
print(f"\nmedians          {'ours':>10} {'quinn':>10} {'ours/quinn':>10}")
for i, n in enumerate(names):
    o, q = med["ours"][i], med["quinn"][i]
    print(f"{n:<16} {o:10.3f} {q:10.3f} {o / q if q else float('nan'):10.2f}")
EOF
