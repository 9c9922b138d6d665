# Shared by compare.sh and compare_s2n.sh (sourced, not run): one live
# loopback upload per "side", each end under /usr/bin/time, and the table of
# rows and medians. The caller sets RUNS, SECS, CONNS, CC, PORT, TPUTCTL and,
# for the peers it runs, PERF (quinn-perf) and QNS (s2n-quic-qns), then calls
# live_setup and live_compare SIDE...
#
# A side's function `side_NAME RUN` leaves $WORK/NAME$RUN.stime and .ctime
# (/usr/bin/time -f "%U %S %M %e" of the server and the client) and prints
# "bytes seconds srtt_ms udp_payload": the payload bytes the upload moved,
# the time they took, the median smoothed RTT (nan if the tool does not say)
# and the largest UDP payload its path MTU discovery reached (0 if unknown).

ME=$(basename "$0")
TIMEFMT="%U %S %M %e"

live_setup() {
    WORK=$(mktemp -d)
    trap 'rm -rf "$WORK"; kill $(jobs -p) 2>/dev/null || true' EXIT
    [ -x /usr/bin/time ] || live_die "needs /usr/bin/time (apt-get install time)"
    command -v python3 > /dev/null || live_die "needs python3"
}

live_die() {
    echo "$ME: $*" >&2
    exit 2
}

# live_need PATH WHAT: a one-line error unless PATH is an executable file.
live_need() {
    [ -x "$1" ] || live_die "$2 not found: no executable $1"
}

# The loopback address the server listens on (ours, quinn-perf, s2n-quic-qns).
HOST=127.0.0.1

# Wait until something listens on UDP $PORT (at most 5 s), so that the client
# does not start before the server's socket exists.
wait_udp_listener() {
    for _ in $(seq 50); do
        ss -Hnlu "sport = :$PORT" 2> /dev/null | grep -q . && return 0
        sleep 0.1
    done
    return 0
}

# Stop a server started under /usr/bin/time (the time process's child) and
# wait for it, so that time writes its figures.
stop_server() {
    kill -TERM $(pgrep -P "$1") 2> /dev/null || kill -TERM "$1" 2> /dev/null
    wait "$1" 2> /dev/null || true
}

side_ours() {
    local out=$WORK/ours$1
    local mtu=${MAX_MTU:+--max-mtu "$MAX_MTU"}
    if [ "${LOOPBACK:-0}" = 1 ]; then
        /usr/bin/time -f "$TIMEFMT" -o "$out.ctime" "$TPUTCTL" loopback -t "$SECS" -P "$CONNS" ${CC:+--cc "$CC"} $mtu -J > "$out.json" 2> "$out.err"
        echo 0 0 0 0 > "$out.stime"
    else
        /usr/bin/time -f "$TIMEFMT" -o "$out.stime" "$TPUTCTL" serve --listen "$HOST:$PORT" $mtu > "$out.serve" 2>&1 &
        local spid=$!
        local pin=""
        for _ in $(seq 100); do
            pin=$(awk '/certificate SHA-256/ { print $3 }' "$out.serve" 2> /dev/null)
            [ -n "$pin" ] && break
            sleep 0.1
        done
        [ -n "$pin" ] || live_die "tputctl serve did not start: $(head -1 "$out.serve")"
        /usr/bin/time -f "$TIMEFMT" -o "$out.ctime" "$TPUTCTL" send "$HOST:$PORT" --pin "$pin" -t "$SECS" -P "$CONNS" ${CC:+--cc "$CC"} $mtu -J > "$out.json" 2> "$out.err"
        stop_server $spid
    fi
    python3 - "$out.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
srtt = sorted(i["srtt_ms"] for t in d["transfers"] for i in t["intervals"] if i.get("srtt_ms"))
print(s["bytes"], s["seconds"], srtt[len(srtt) // 2] if srtt else "nan", s.get("path_mtu", 0))
EOF
}

side_quinn() {
    local out=$WORK/quinn$1
    local cong=""
    case "$CC" in newreno*) cong="--congestion new-reno" ;; cubic*) cong="--congestion cubic" ;; bbr*) cong="--congestion bbr" ;; esac
    /usr/bin/time -f "$TIMEFMT" -o "$out.stime" "$PERF" server --listen "$HOST:$PORT" $cong > "$out.serve" 2>&1 &
    local spid=$!
    wait_udp_listener
    local cpids=()
    for c in $(seq "$CONNS"); do
        /usr/bin/time -f "$TIMEFMT" -o "$out.ctime$c" "$PERF" client "$HOST:$PORT" --upload-size 1000G --download-size 0 \
            --duration "$SECS" --json "$out.json$c" --conn-stats $cong > "$out.client$c" 2>&1 &
        cpids+=($!)
    done
    wait "${cpids[@]}" || true
    stop_server $spid
    # Each file's last line (see live_compare).
    for f in "$out".ctime*; do tail -n 1 "$f"; done | awk '{ u += $1; s += $2; if ($4 > e) e = $4 } END { print u, s, 0, e }' > "$out.clients"
    mv "$out.clients" "$out.ctime"
    python3 - "$out" "$CONNS" <<'EOF'
import json, re, sys
base, conns = sys.argv[1], int(sys.argv[2])
total, secs = 0, 0.0
for c in range(1, conns + 1):
    d = json.load(open(f"{base}.json{c}"))
    sent = [i for i in d["intervals"] if i["sum"].get("sender", True)]
    total += sum(i["sum"]["bytes"] for i in sent)
    secs = max(secs, sum(i["sum"]["seconds"] for i in sent))
rtts, mtu = [], 0
for c in range(1, conns + 1):
    text = open(f"{base}.client{c}").read()
    for v, u in re.findall(r"rtt: ([0-9.]+)(ms|µs|us|s)\b", text):
        rtts.append(float(v) * {"ms": 1, "µs": 1e-3, "us": 1e-3, "s": 1e3}[u])
    mtu = max([mtu] + [int(m) for m in re.findall(r"current_mtu: ([0-9]+)", text)])
rtts.sort()
print(total, secs, rtts[len(rtts) // 2] if rtts else "nan", mtu)
EOF
}

# s2n-quic-qns perf (the QUIC performance protocol, draft-banks-quic-performance):
# the client opens a bidirectional stream, asks for 0 bytes back and sends
# --send bytes, so it moves a byte count, not for a time. Each run sends what
# SECS seconds took at the last s2n-quic run's rate (the first: at our side's
# rate in the same round), and its time is the client's wall time, process
# start, handshake and close included. Its controller is CUBIC, as ours by
# default, unless CC is a bbr spec; its path MTU discovery probes up to
# MAX_MTU (default 1500; s2n-quic's own default is 9000).
side_s2n() {
    local out=$WORK/s2n$1
    local cc=cubic
    case "$CC" in bbr*) cc=bbr ;; esac
    local rate
    rate=$(cat "$WORK/s2n.rate" 2> /dev/null || awk '{ print $1 / $2 }' "$WORK/ours$1.rate")
    local per_conn
    per_conn=$(python3 -c "import sys; print(max(1 << 20, int(float(sys.argv[1]) * float(sys.argv[2]) / int(sys.argv[3]))))" "$rate" "$SECS" "$CONNS")
    local net="--max-mtu ${MAX_MTU:-1500} --cc $cc"
    /usr/bin/time -f "$TIMEFMT" -o "$out.stime" "$QNS" perf server --ip "$HOST" --port "$PORT" --connections "$CONNS" $net > "$out.serve" 2>&1 &
    local spid=$!
    wait_udp_listener
    /usr/bin/time -f "$TIMEFMT" -o "$out.ctime" "$QNS" perf client --ip "$HOST" --port "$PORT" --local-ip "$HOST" \
        --connections "$CONNS" --concurrency "$CONNS" --send "$per_conn" --receive 0 $net > "$out.client" 2>&1 \
        || live_die "s2n-quic-qns perf client failed: $(tail -1 "$out.client")"
    # The server exits by itself after CONNECTIONS connections.
    for _ in $(seq 50); do kill -0 $spid 2> /dev/null || break; sleep 0.1; done
    stop_server $spid
    local wall
    wall=$(tail -n 1 "$out.ctime" | awk '{ print $4 }')
    echo $((per_conn * CONNS)) "$wall" nan 0
}

# The table: one row per side and run, then the medians and each peer's
# ratio ours/peer.
live_compare() {
    local sides=("$@")
    echo "load average:$(uptime | sed 's/.*load average://')"
    printf "%-6s %-4s %12s %10s %10s %10s %10s %8s\n" side run "Gbit/s" "srv s/GB" "cli s/GB" "both s/GB" "srtt ms" "udp max"
    : > "$WORK/rows"
    for r in $(seq "$RUNS"); do
        for side in "${sides[@]}"; do
            local bytes secs srtt mtu
            read -r bytes secs srtt mtu < <("side_$side" "$r")
            [ -n "$bytes" ] && [ "$bytes" != 0 ] || live_die "$side run $r moved nothing (see $side's output)"
            echo "$bytes $secs" > "$WORK/$side$r.rate"
            [ "$side" = s2n ] && awk '{ print $1 / $2 }' "$WORK/$side$r.rate" > "$WORK/s2n.rate"
            python3 - "$side" "$r" "$bytes" "$secs" "$WORK/$side$r.stime" "$WORK/$side$r.ctime" "$srtt" "$mtu" <<'EOF' | tee -a "$WORK/rows"
import sys
side, run, b, secs, stime, ctime, srtt, mtu = sys.argv[1:]
b, secs, srtt = float(b), float(secs), float(srtt)
# The last line: /usr/bin/time puts "Command terminated by signal 15" (the
# stopped server) or "Command exited with non-zero status" before it.
cpu = lambda f: sum(map(float, open(f).read().splitlines()[-1].split()[:2]))
s, c = cpu(stime), cpu(ctime)
gb = max(b, 1) / 1e9
print(f"{side:<6} {run:<4} {b * 8 / secs / 1e9:12.3f} {s / gb:10.3f} {c / gb:10.3f} {(s + c) / gb:10.3f} {srtt:10.3f} {mtu:>8}")
EOF
        done
    done
    python3 - "$WORK/rows" "${sides[@]}" <<'EOF'
import math, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
sides = sys.argv[2:]
med = {}
for side in sides:
    cols = list(zip(*[list(map(float, r[2:7])) for r in rows if r[0] == side]))
    med[side] = [statistics.median(c) for c in cols]
names = ["goodput Gbit/s", "server CPU-s/GB", "client CPU-s/GB", "both CPU-s/GB", "srtt ms"]
peers = [s for s in sides if s != "ours"]
print(f"\nmedians          " + "".join(f"{s:>10}" for s in sides) + "".join(f"{'ours/' + p:>12}" for p in peers))
for i, n in enumerate(names):
    ratio = lambda p: med["ours"][i] / med[p][i] if med[p][i] and not math.isnan(med[p][i]) else float("nan")
    print(f"{n:<16} " + "".join(f"{med[s][i]:10.3f}" for s in sides) + "".join(f"{ratio(p):12.2f}" for p in peers))
EOF
}
