#!/usr/bin/env bash
# Live loopback uploads: `tputctl serve` + `tputctl send` against quinn's own
# `quinn-perf server` + `quinn-perf client` (the same QUIC stack underneath),
# run alternately, each end under /usr/bin/time. Prints goodput, CPU seconds
# per GB for each end and both, the smoothed RTT, the largest UDP payload
# reached, and our/quinn ratios (medians over the runs). compare_s2n.sh adds
# s2n-quic's perf tool.
#
# Usage:
#   benches/live/compare.sh QUINN_DIR [RUNS] [SECONDS] [CONNECTIONS] [CC]
#
#   QUINN_DIR    a checkout of https://github.com/quinn-rs/quinn with its perf
#                tool built in release mode (QUINN_DIR/target/release/quinn-perf;
#                QUINN_PERF=FILE names the binary instead); nothing is built
#   RUNS         alternating runs of each (default 3)
#   SECONDS      length of each upload (default 10)
#   CONNECTIONS  parallel connections, `tputctl send -P` and quinn-perf
#                clients (default 1)
#   CC           our controller: a spec from `tputctl cc list`
#                (default: tputctl's default); quinn-perf runs its default
#                (CUBIC) unless CC is newreno, cubic or bbr, which it also has
#
# Also `loopback`: with LOOPBACK=1, our side is `tputctl loopback` (server
# and client in one process, two threads) and its CPU is reported as both.
#
# Environment: TPUTCTL (default target/release/tputctl, built if missing),
# PORT (default 24433), MAX_MTU (our side's `--max-mtu` on both ends, e.g.
# 9000 to let path MTU discovery use loopback's large MTU; quinn-perf has no
# such bound and keeps quinn-proto's 1452-byte datagrams).
set -uo pipefail

QUINN_DIR=${1:?"usage: $0 QUINN_DIR [RUNS] [SECONDS] [CONNECTIONS] [CC]"}
RUNS=${2:-3}
SECS=${3:-10}
CONNS=${4:-1}
CC=${5:-}
PORT=${PORT:-24433}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TPUTCTL=${TPUTCTL:-$ROOT/target/release/tputctl}
PERF=${QUINN_PERF:-$QUINN_DIR/target/release/quinn-perf}
. "$ROOT/benches/live/lib.sh"

live_setup
[ -x "$TPUTCTL" ] || (cd "$ROOT" && cargo build --release -p tputctl) || exit 2
live_need "$PERF" "quinn's perf tool"
live_compare ours quinn
