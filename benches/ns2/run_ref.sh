#!/bin/bash
# The simulator's cost against ns-2 2.35 on seed 000's Fig. 6 dumbbell
# (1 tagged + 30 background flows, 100 Mbit/s bottleneck, 120 s simulated):
#   1. real QUIC: `tputctl sim scenarios/seed000-fig6-n30.toml` (controller
#      traces on, as shipped) against ns-2's `seed000_fig6.tcl`, three pairs
#      run back to back (ns-2 first), CPU (user + system) and peak memory of
#      each process from /usr/bin/time; the medians of the three ratios;
#   2. the TCP model: the `tcp_cpu` bench (31 Reno flows against ns-2's
#      `tcp_compare.tcl`, alternating, three runs each).
# Needs: apt-get install ns2 (Debian 2.35+dfsg-5), /usr/bin/time, bc.
# Usage: bash benches/ns2/run_ref.sh [path-to-tput-workspace]   (default: this repository)
set -u
here=$(cd "$(dirname "$0")" && pwd)
ws=${1:-$(cd "$here/../.." && pwd)}
out=${OUT:-$ws/target/repro/ns2}; mkdir -p "$out"
command -v ns >/dev/null || { echo "ns-2 is not installed (apt-get install ns2)"; exit 1; }

# Build first (not measured).
(cd "$ws" && cargo build --release -p tputctl && cargo bench -p tput-benches --bench tcp_cpu --no-run) \
    >"$out/build.log" 2>&1 || { echo "build failed, see $out/build.log"; exit 1; }

field() { awk -F': ' "/$1/{print \$2}" "$2"; }   # field NAME FILE (from time -v)
cpu_of() { echo "$(field 'User time' "$1") + $(field 'System time' "$1")" | bc; }
median() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
ratio() { echo "scale=4; $1 / $2" | bc; }

cpu_r=(); mem_r=()
for i in 1 2 3; do
    (cd "$here" && /usr/bin/time -v ns seed000_fig6.tcl) >"$out/ns2_$i.out" 2>"$out/ns2_$i.time"
    /usr/bin/time -v "$ws/target/release/tputctl" sim "$ws/scenarios/seed000-fig6-n30.toml" --json \
        >"$out/tput_$i.json" 2>"$out/tput_$i.time"
    nc=$(cpu_of "$out/ns2_$i.time"); nm=$(field 'Maximum resident' "$out/ns2_$i.time")
    tc=$(cpu_of "$out/tput_$i.time"); tm=$(field 'Maximum resident' "$out/tput_$i.time")
    cpu_r+=("$(ratio "$tc" "$nc")"); mem_r+=("$(ratio "$tm" "$nm")")
    printf 'pair %d: ns-2 %.2f CPU-s %d KB, tputctl sim %.2f CPU-s %d KB: %.2fx CPU, %.2fx memory   (%s)\n' \
        "$i" "$nc" "$nm" "$tc" "$tm" "${cpu_r[-1]}" "${mem_r[-1]}" "$(uptime | sed 's/.*load/load/')"
done
printf 'real QUIC, median of 3: %.2fx ns-2 CPU, %.2fx ns-2 memory\n' "$(median "${cpu_r[@]}")" "$(median "${mem_r[@]}")"
echo "trace hash: $(grep -o '"trace_hash": "[0-9a-f]*"' "$out/tput_1.json")"

echo "== the TCP model (tcp_cpu bench, 3 runs each side)"
(cd "$ws" && TPUT_BENCH_REPS=3 cargo bench -p tput-benches --bench tcp_cpu) 2>&1 | tee "$out/tcp_cpu.out" |
    grep -v '^\s*\(Compiling\|Finished\|Running\)'
