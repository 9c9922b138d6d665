# red_compare.tcl -- ns-2 (2.35) side of the RED cross-check
# (`cargo bench -p tput-benches --bench aqm_check`, module tput_benches::aqm_check).
#
# The seed-000 dumbbell of tcp_compare.tcl with a RED bottleneck: N background
# flows plus one tagged flow (flow 0), each on its own access pair:
#   S_i --1Gb/2.5ms DropTail(1000)--> R1 --100Mb/5ms RED(30)--> R2
#       --1Gb/2.5ms DropTail(1000)--> D_i          (all links duplex)
# Queue/RED as ns-2 2.35 runs it, its parameters set explicitly: thresh_ 5,
# maxthresh_ 15, linterm_ 10 (max_p 0.1), q_weight_ 0.002, gentle_ true,
# wait_ true, packet mode (bytes_ and queue_in_bytes_ false), mean_pktsize_
# 1040 (the wire size of a 1000-byte segment), setbit_ false (drops, no
# ECN), drop_tail_ true, adaptive_ 0; limit 30 packets.
# Agent/TCP/Sack1 -> Agent/TCPSink/Sack1 (no delayed ACKs), packetSize_ 1000 B,
# window_ 10000, every other setting ns-2's default. FTP sources start
# uniformly in [0, 1) s (RNG seeded with `seed`) and run to the end.
#
# Usage: ns red_compare.tcl N seed duration_s
#
# Output, one record per line:
#   start <flow> <seconds>
#   flow <flow> <acked bytes> <timeouts (nrexmit_)> <retransmitted packets>
#   queue <samples> <mean waiting packets> <mean ave_>   (every 10 ms from 0)
#   bottleneck <departed bytes> <departed packets> <drops> <arrived packets> <duration_s>

if {$argc != 3} {
    puts stderr "usage: ns red_compare.tcl N seed duration_s"
    exit 1
}
set nbg [lindex $argv 0]
set seed [lindex $argv 1]
set duration [lindex $argv 2]
set nflows [expr {$nbg + 1}]
set pktsize 1000

set ns [new Simulator]
Agent/TCP set packetSize_ $pktsize
Agent/TCP set window_ 10000

Queue/RED set thresh_ 5
Queue/RED set maxthresh_ 15
Queue/RED set linterm_ 10
Queue/RED set q_weight_ 0.002
Queue/RED set gentle_ true
Queue/RED set wait_ true
Queue/RED set bytes_ false
Queue/RED set queue_in_bytes_ false
Queue/RED set mean_pktsize_ 1040
Queue/RED set setbit_ false
Queue/RED set drop_tail_ true
Queue/RED set adaptive_ 0

set R1 [$ns node]
set R2 [$ns node]
$ns duplex-link $R1 $R2 100Mb 5ms RED
$ns queue-limit $R1 $R2 30
$ns queue-limit $R2 $R1 30
set qm [$ns monitor-queue $R1 $R2 ""]
set redq [[$ns link $R1 $R2] queue]

# The monitor's byte counter is a 32-bit int that wraps after 2 GiB: add up
# its increments once a second.
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

# The queue every 10 ms: waiting packets (the monitor's pkts_) and RED's average.
set nsamples 0
set sumq 0.0
set sumave 0.0
proc sample_queue {} {
    global ns qm redq nsamples sumq sumave duration
    incr nsamples
    set sumq [expr {$sumq + [$qm set pkts_]}]
    set sumave [expr {$sumave + [$redq set ave_]}]
    set next [expr {[$ns now] + 0.01}]
    if {$next < $duration} { $ns at $next "sample_queue" }
}
$ns at 0.01 "sample_queue"

set rng [new RNG]
$rng seed $seed

proc acked {i} {
    global tcp pktsize
    return [expr {max(0, [$tcp($i) set ack_]) * $pktsize}]
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

    set tcp($i) [new Agent/TCP/Sack1]
    $tcp($i) set fid_ $i
    set sink($i) [new Agent/TCPSink/Sack1]
    $ns attach-agent $S($i) $tcp($i)
    $ns attach-agent $D($i) $sink($i)
    $ns connect $tcp($i) $sink($i)
    set ftp($i) [new Application/FTP]
    $ftp($i) attach-agent $tcp($i)
    set start [$rng uniform 0 1]
    puts "start $i $start"
    $ns at $start "$ftp($i) start"
}

proc finish {} {
    global ns qm nflows duration tcp departed lastdep nsamples sumq sumave
    for {set i 0} {$i < $nflows} {incr i} {
        puts "flow $i [acked $i] [$tcp($i) set nrexmit_] [$tcp($i) set nrexmitpack_]"
    }
    puts "queue $nsamples [expr {$sumq / max(1, $nsamples)}] [expr {$sumave / max(1, $nsamples)}]"
    set d [expr {[$qm set bdepartures_] - $lastdep}]
    if {$d < 0} { set d [expr {$d + 4294967296}] }
    puts "bottleneck [expr {$departed + $d}] [$qm set pdepartures_] [$qm set pdrops_] [$qm set parrivals_] $duration"
    exit 0
}

$ns at $duration "finish"
$ns run
