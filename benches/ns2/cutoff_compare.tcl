# cutoff_compare.tcl -- ns-2 (2.35) side of the cut-off cross-check
# (`cargo bench -p tput-benches --bench tcp_ns2`, module tput_benches::tcp_ns2).
#
# Seed 001's path: one sender, a switch, one receiver, all links duplex:
#   S --1Gb/10us DropTail(1000)--> W --1Gb/10us DropTail(1000)--> D
# The switch periodically cuts what it forwards to D: an ErrorModel/TwoState
# in time units on the W -> D link (inserted between the switch's queue and
# the link, so a packet the switch starts to send during the cut is lost:
# the paper's drop mode), connected for occupancy * period, then cut for the
# rest of the period, starting connected at t = 0 (two constant random
# variables). One Agent/TCP/Newreno -> Agent/TCPSink (no delayed ACKs),
# packetSize_ 1000, window_ 10000 (never the limit), minrto_ as given, every
# other setting ns-2's default (windowInit_ 2, rtxcur_init_ 3 s, tcpTick_
# 10 ms); one FTP source from `start` to the end.
#
# Usage: ns cutoff_compare.tcl period_s occupancy minrto_s duration_s [start_s]
#   (occupancy 1 = no cut; start_s: when the FTP source starts, default 0,
#   which sets the flow's phase against the cut)
#
# Output, one record per line:
#   rto <seconds>                 each retransmission timeout (nrexmit_ grew)
#   flow <acked bytes> <timeouts (nrexmit_)> <retransmitted packets>
#   cut <dropped packets>         packets the error model dropped

if {$argc != 4 && $argc != 5} {
    puts stderr "usage: ns cutoff_compare.tcl period_s occupancy minrto_s duration_s \[start_s\]"
    exit 1
}
set start 0.0
if {$argc == 5} { set start [lindex $argv 4] }
set period [lindex $argv 0]
set occupancy [lindex $argv 1]
set minrto [lindex $argv 2]
set duration [lindex $argv 3]
set pktsize 1000

set ns [new Simulator]
Agent/TCP set packetSize_ $pktsize
Agent/TCP set window_ 10000
Agent/TCP set minrto_ $minrto

set S [$ns node]
set W [$ns node]
set D [$ns node]
$ns duplex-link $S $W 1Gb 10us DropTail
$ns duplex-link $W $D 1Gb 10us DropTail
foreach {a b} [list $S $W $W $S $W $D $D $W] {
    $ns queue-limit $a $b 1000
}

# Dropped packets go to a counting sink instead of ns-2's null drop target.
set cutdrops [new Agent/LossMonitor]
$ns attach-agent $D $cutdrops
if {$occupancy < 1} {
    set up [new RandomVariable/Constant]
    $up set val_ [expr {$occupancy * $period}]
    set down [new RandomVariable/Constant]
    $down set val_ [expr {(1.0 - $occupancy) * $period}]
    set em [new ErrorModel/TwoState $up $down time]
    $em set bandwidth_ 1Gb
    $ns lossmodel $em $W $D
    # After lossmodel, which points it at the link's own drop head.
    $em drop-target $cutdrops
}

set tcp [new Agent/TCP/Newreno]
set sink [new Agent/TCPSink]
$ns attach-agent $S $tcp
$ns attach-agent $D $sink
$ns connect $tcp $sink
set ftp [new Application/FTP]
$ftp attach-agent $tcp
$ns at $start "$ftp start"

# Report each timeout when it happens (polled every 100 us).
set seen 0
proc poll {} {
    global ns tcp seen
    set n [$tcp set nrexmit_]
    if {$n > $seen} {
        puts "rto [$ns now]"
        set seen $n
    }
    $ns at [expr {[$ns now] + 0.0001}] "poll"
}
$ns at 0.0001 "poll"

proc finish {} {
    global tcp pktsize cutdrops
    set acked [expr {max(0, [$tcp set ack_]) * $pktsize}]
    puts "flow $acked [$tcp set nrexmit_] [$tcp set nrexmitpack_]"
    puts "cut [$cutdrops set npkts_]"
    exit 0
}
$ns at $duration "finish"
$ns run
