#!/bin/bash
# Reproduce the ns-2 vs tput comparison (seed 000 Fig. 6 dumbbell, 120 s): CPU time and peak memory.
# Needs: apt-get install ns2 (Debian 2.35+dfsg-5), /usr/bin/time, the tput workspace.
# Usage: bash benches/ns2/run_ref.sh [path-to-tput-workspace]   (default: this repository)
set -u
here=$(cd "$(dirname "$0")" && pwd)
ws=${1:-$(cd "$here/../.." && pwd)}
out=${OUT:-$ws/target/repro/ns2}; mkdir -p "$out"

# Compile the bench first (not measured).
(cd "$ws" && cargo bench -p tput-benches --bench sim_quic --no-run) >"$out/build.log" 2>&1 || { echo "build failed, see $out/build.log"; exit 1; }

ns2run() {  # $1 = label
    echo "== ns-2 $1   $(uptime)"
    (cd "$here" && /usr/bin/time -v ns seed000_fig6.tcl) >"$out/ns2_$1.out" 2>"$out/ns2_$1.time"
    cat "$out/ns2_$1.out"
    u=$(awk -F': ' '/User time/{print $2}' "$out/ns2_$1.time")
    s=$(awk -F': ' '/System time/{print $2}' "$out/ns2_$1.time")
    w=$(awk -F': ' '/Elapsed \(wall clock\)/{print $2}' "$out/ns2_$1.time")
    r=$(awk -F': ' '/Maximum resident/{print $2}' "$out/ns2_$1.time")
    echo "ns-2 $1: user $u s, sys $s s, cpu $(echo "$u + $s" | bc) s, wall $w, maxrss ${r} KB"
}

for i in 1 2 3; do ns2run run$i; done
echo "== tput sim_quic b:   $(uptime)"
(cd "$ws" && cargo bench -p tput-benches --bench sim_quic -- b:) 2>&1 | tee "$out/sim_quic.out" | grep -v '^\s*\(Compiling\|Finished\|Running\)'
echo "   after: $(uptime)"
# The same dumbbell and flow count through `tputctl sim` (the shipped
# scenario: 1 guarantee + 30 NewReno QUIC flows, 120 s), for the
# peak memory as well; controller traces off, as ns-2 keeps no trace either.
(cd "$ws" && cargo build --release -p tputctl) >>"$out/build.log" 2>&1
/usr/bin/time -v "$ws/target/release/tputctl" sim "$ws/scenarios/seed000-fig6-n30.toml" --no-cc-trace \
    >"$out/tput_sim.out" 2>"$out/tput_sim.time"
tu=$(awk -F': ' '/User time/{print $2}' "$out/tput_sim.time")
ts=$(awk -F': ' '/System time/{print $2}' "$out/tput_sim.time")
tr=$(awk -F': ' '/Maximum resident/{print $2}' "$out/tput_sim.time")
tcpu=$(echo "$tu + $ts" | bc)
echo "tputctl sim --no-cc-trace: cpu $tcpu s, maxrss ${tr} KB"
ns2run run4
ncpu=$(echo "$u + $s" | bc)
ratio() { printf '%.2f' "$(echo "scale=4; $1 / $2" | bc)"; }
echo "ratio to ns-2 (run4): cpu $(ratio "$tcpu" "$ncpu")x, memory $(ratio "$tr" "$r")x"
