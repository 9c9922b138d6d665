#!/bin/bash
# Reproduce the ns-2 vs tput sim_quic CPU comparison (seed 000 Fig. 6 dumbbell, 120 s).
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
ns2run run4
