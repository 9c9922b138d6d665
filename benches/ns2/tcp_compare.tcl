# tcp_compare.tcl -- ns-2 (2.35) side of the TCP model cross-check
# (`cargo bench -p tput-benches --bench tcp_ns2`, module tput_benches::tcp_ns2).
#
# The seed-000 dumbbell: N background flows plus one tagged flow (flow 0),
# each on its own access pair:
#   S_i --1Gb/2.5ms DropTail(1000)--> R1 --100Mb/5ms DropTail(30)--> R2
#       --1Gb/2.5ms DropTail(1000)--> D_i          (all links duplex)
# Agent/TCP/Reno or Agent/TCP/Newreno -> Agent/TCPSink (no delayed ACKs),
# packetSize_ 1000 B, window_ 10000 (never the limit), every other setting
# ns-2's default (windowInit_ 2, minrto_ 0.2 s, tcpTick_ 10 ms). FTP sources
# start uniformly in [0, 1) s (RNG seeded with `seed`) and run to the end.
#
# Usage: ns tcp_compare.tcl N seed reno|newreno|sack|delack duration_s [cwnd_trace]
#
# sack: Agent/TCP/Sack1 -> Agent/TCPSink/Sack1; delack: Agent/TCP/Newreno ->
# Agent/TCPSink/DelAck (an ACK per two segments or after interval_ 100 ms).
# With cwnd_trace, flow 0's cwnd_ is traced into that file (ns-2's variable
# trace: "time saddr sport daddr dport cwnd_ value", value in packets).
#
# Output, one record per line:
#   start <flow> <seconds>
#   slot <flow> <k> <bytes>      payload bytes cumulatively ACKed in the
#                                flow's k-th second after its start (k >= 1;
#                                only whole seconds before the end)
#   flow <flow> <acked bytes> <timeouts (nrexmit_)> <retransmitted packets>
#   bottleneck <departed bytes> <departed packets> <drops> <duration_s>

if {$argc != 4 && $argc != 5} {
    puts stderr "usage: ns tcp_compare.tcl N seed reno|newreno|sack|delack duration_s \[cwnd_trace\]"
    exit 1
}
set nbg [lindex $argv 0]
set seed [lindex $argv 1]
set variant [lindex $argv 2]
set duration [lindex $argv 3]
set nflows [expr {$nbg + 1}]
set pktsize 1000
set sinktype Agent/TCPSink
switch -- $variant {
    reno { set agent Agent/TCP/Reno }
    newreno { set agent Agent/TCP/Newreno }
    sack { set agent Agent/TCP/Sack1; set sinktype Agent/TCPSink/Sack1 }
    delack { set agent Agent/TCP/Newreno; set sinktype Agent/TCPSink/DelAck }
    default { puts stderr "variant must be reno, newreno, sack or delack"; exit 1 }
}

set ns [new Simulator]
Agent/TCP set packetSize_ $pktsize
Agent/TCP set window_ 10000

set R1 [$ns node]
set R2 [$ns node]
$ns duplex-link $R1 $R2 100Mb 5ms DropTail
$ns queue-limit $R1 $R2 30
$ns queue-limit $R2 $R1 30
set qm [$ns monitor-queue $R1 $R2 ""]

# The monitor's byte counter is a 32-bit int that wraps after 2 GiB (about
# 170 s at 100 Mbit/s): add up its increments once a second instead.
set departed 0
set lastdep 0
proc count_departures {} {
    global ns qm departed lastdep
    set now [$qm set bdepartures_]
    set d [expr {$now - $lastdep}]
    if {$d < 0} { set d [expr {$d + 4294967296}] }
    set departed [expr {$departed + $d}]
    set lastdep $now
    $ns at [expr {[$ns now] + 1.0}] "count_departures"
}
$ns at 1.0 "count_departures"

set rng [new RNG]
$rng seed $seed

# Cumulatively ACKed payload bytes of flow i. Packet 0 is ns-2's 40-byte SYN
# stand-in (syn_ true), so ack_ data packets have been acknowledged.
proc acked {i} {
    global tcp pktsize
    return [expr {max(0, [$tcp($i) set ack_]) * $pktsize}]
}

proc sample {i k} {
    global last
    set b [acked $i]
    puts "slot $i $k [expr {$b - $last($i)}]"
    set last($i) $b
}

for {set i 0} {$i < $nflows} {incr i} {
    set S($i) [$ns node]
    set D($i) [$ns node]
    $ns duplex-link $S($i) $R1 1Gb 2.5ms DropTail
    $ns duplex-link $R2 $D($i) 1Gb 2.5ms DropTail
    $ns queue-limit $S($i) $R1 1000
    $ns queue-limit $R1 $S($i) 1000
    $ns queue-limit $R2 $D($i) 1000
    $ns queue-limit $D($i) $R2 1000

    set tcp($i) [new $agent]
    $tcp($i) set fid_ $i
    set sink($i) [new $sinktype]
    $ns attach-agent $S($i) $tcp($i)
    $ns attach-agent $D($i) $sink($i)
    $ns connect $tcp($i) $sink($i)

    if {$i == 0 && $argc == 5} {
        set cwndfile [open [lindex $argv 4] w]
        $tcp($i) attach $cwndfile
        $tcp($i) trace cwnd_
    }
    set ftp($i) [new Application/FTP]
    $ftp($i) attach-agent $tcp($i)
    set start [$rng uniform 0 1]
    puts "start $i $start"
    $ns at $start "$ftp($i) start"
    set last($i) 0
    for {set k 1} {$start + $k <= $duration} {incr k} {
        $ns at [expr {$start + $k}] "sample $i $k"
    }
}

proc finish {} {
    global ns qm nflows duration tcp departed lastdep
    for {set i 0} {$i < $nflows} {incr i} {
        puts "flow $i [acked $i] [$tcp($i) set nrexmit_] [$tcp($i) set nrexmitpack_]"
    }
    set d [expr {[$qm set bdepartures_] - $lastdep}]
    if {$d < 0} { set d [expr {$d + 4294967296}] }
    puts "bottleneck [expr {$departed + $d}] [$qm set pdepartures_] [$qm set pdrops_] $duration"
    if {[info exists cwndfile]} { close $cwndfile }
    exit 0
}

$ns at $duration "finish"
$ns run
