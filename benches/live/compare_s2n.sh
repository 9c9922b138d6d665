#!/usr/bin/env bash
# Live loopback uploads of three QUIC stacks, run alternately, each end under
# /usr/bin/time: `tputctl serve` + `tputctl send`, quinn's `quinn-perf server`
# + `quinn-perf client`, and s2n-quic's `s2n-quic-qns perf server` +
# `s2n-quic-qns perf client` (the QUIC performance protocol: the client asks
# for 0 bytes back and uploads a byte count). Prints, per run and as medians,
# goodput, CPU seconds per GB for each end and both, the smoothed RTT, the
# largest UDP payload path MTU discovery reached where the tool says, and the
# ratios ours/quinn and ours/s2n.
#
# Usage:
#   MAX_MTU=1500|9000 benches/live/compare_s2n.sh S2N_DIR QUINN_DIR [RUNS] [SECONDS] [CONNECTIONS] [CC]
#
#   S2N_DIR      a checkout of https://github.com/aws/s2n-quic with its
#                s2n-quic-qns built in release mode
#                (S2N_DIR/target/release/s2n-quic-qns; S2N_QNS=FILE names the
#                binary instead); nothing is built
#   QUINN_DIR    as compare.sh takes it (quinn-perf; QUINN_PERF=FILE); `-`
#                leaves quinn out
#   RUNS, SECONDS, CONNECTIONS, CC   as compare.sh takes them (defaults 3, 10,
#                1, tputctl's default); s2n-quic runs CUBIC, or BBR when CC
#                is a bbr spec
#
# MAX_MTU (default 1500) is the largest IP packet path MTU discovery may find,
# `--max-mtu` on both ends of ours and of s2n-quic-qns (whose own default is
# 9000). quinn-perf has no such bound and keeps quinn-proto's 1452-byte
# datagrams at any MAX_MTU.
#
# s2n-quic-qns moves a byte count, not for a time: each run sends what SECONDS
# took at the previous s2n-quic run's rate (the first run: at ours' rate in the
# same round), and its goodput is over the client's wall time (process start,
# handshake and close included; a few milliseconds).
#
# Environment as compare.sh: TPUTCTL, PORT, LOOPBACK.
set -uo pipefail

USAGE="usage: MAX_MTU=1500|9000 $0 S2N_DIR QUINN_DIR [RUNS] [SECONDS] [CONNECTIONS] [CC]"
S2N_DIR=${1:?"$USAGE"}
QUINN_DIR=${2:?"$USAGE"}
RUNS=${3:-3}
SECS=${4:-10}
CONNS=${5:-1}
CC=${6:-}
PORT=${PORT:-24433}
MAX_MTU=${MAX_MTU:-1500}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TPUTCTL=${TPUTCTL:-$ROOT/target/release/tputctl}
PERF=${QUINN_PERF:-$QUINN_DIR/target/release/quinn-perf}
QNS=${S2N_QNS:-$S2N_DIR/target/release/s2n-quic-qns}
. "$ROOT/benches/live/lib.sh"

case "$MAX_MTU" in
    '' | *[!0-9]*) live_die "MAX_MTU must be a number of bytes (1500 or 9000), not '$MAX_MTU'" ;;
esac
live_setup
[ -x "$TPUTCTL" ] || (cd "$ROOT" && cargo build --release -p tputctl) || exit 2
live_need "$QNS" "s2n-quic's perf tool (s2n-quic-qns)"
sides=(ours)
if [ "$QUINN_DIR" != - ]; then
    live_need "$PERF" "quinn's perf tool"
    sides+=(quinn)
fi
sides+=(s2n)
echo "MAX_MTU=$MAX_MTU: ${sides[*]}, $RUNS runs of ${SECS} s, $CONNS connection(s), CC ${CC:-default}"
live_compare "${sides[@]}"
