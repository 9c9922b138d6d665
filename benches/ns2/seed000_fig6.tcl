# seed000_fig6.tcl -- ns-2 (2.35) speed reference for the seed-000 Fig. 6 dumbbell.
#
# 31 TCP Reno flows (Agent/TCP/Reno -> Agent/TCPSink, FTP infinite sources,
# packetSize_ 1000 B, window_ 10000) on a dumbbell:
#   S_i --1Gb/2.5ms DropTail(1000)--> R1 --100Mb/5ms DropTail(30)--> R2
#       --1Gb/2.5ms DropTail(1000)--> D_i          (all links duplex)
# Flows start staggered uniformly in [0, 10 ms) (RNG seed 1) and run for
# 120 s of simulated time. No trace files: QueueMonitors on the two
# bottleneck directions count packets, and the end of the run prints the
# counters, drops and a per-flow goodput summary.
#
# Run:  /usr/bin/time -v ns seed000_fig6.tcl
# Optional args: ns seed000_fig6.tcl [nflows] [duration_s] [countall]
# (countall=1 puts a QueueMonitor on every link to check the link-crossing
# estimate exactly; leave it off for timing runs.)

set nflows 31
set duration 120.0
if {$argc >= 1} { set nflows [lindex $argv 0] }
if {$argc >= 2} { set duration [lindex $argv 1] }
set countall 0
if {$argc >= 3} { set countall [lindex $argv 2] }
set pktsize 1000

set ns [new Simulator]

Agent/TCP set packetSize_ $pktsize
Agent/TCP set window_ 10000

set R1 [$ns node]
set R2 [$ns node]
$ns duplex-link $R1 $R2 100Mb 5ms DropTail
$ns queue-limit $R1 $R2 30
$ns queue-limit $R2 $R1 30

# Monitors on both bottleneck directions (forward data, reverse ACKs).
set qmf [$ns monitor-queue $R1 $R2 ""]
set qmr [$ns monitor-queue $R2 $R1 ""]

set rng [new RNG]
$rng seed 1

for {set i 0} {$i < $nflows} {incr i} {
    set S($i) [$ns node]
    set D($i) [$ns node]
    $ns duplex-link $S($i) $R1 1Gb 2.5ms DropTail
    $ns duplex-link $R2 $D($i) 1Gb 2.5ms DropTail
    $ns queue-limit $S($i) $R1 1000
    $ns queue-limit $R1 $S($i) 1000
    $ns queue-limit $R2 $D($i) 1000
    $ns queue-limit $D($i) $R2 1000

    set tcp($i) [new Agent/TCP/Reno]
    $tcp($i) set fid_ $i
    set sink($i) [new Agent/TCPSink]
    $ns attach-agent $S($i) $tcp($i)
    $ns attach-agent $D($i) $sink($i)
    $ns connect $tcp($i) $sink($i)

    if {$countall} {
        foreach {a b} [list $S($i) $R1 $R1 $S($i) $R2 $D($i) $D($i) $R2] {
            lappend allqm [$ns monitor-queue $a $b ""]
        }
    }

    set ftp($i) [new Application/FTP]
    $ftp($i) attach-agent $tcp($i)
    $ns at [$rng uniform 0 0.01] "$ftp($i) start"
}

proc finish {} {
    global ns qmf qmr nflows duration tcp sink pktsize countall allqm
    set fdep [$qmf set pdepartures_]
    set farr [$qmf set parrivals_]
    set fdrop [$qmf set pdrops_]
    set rdep [$qmr set pdepartures_]
    set rarr [$qmr set parrivals_]
    set rdrop [$qmr set pdrops_]
    puts [format "bottleneck fwd R1->R2: arrivals %d departures %d drops %d (departed bytes %d)" \
        $farr $fdep $fdrop [$qmf set bdepartures_]]
    puts [format "bottleneck rev R2->R1: arrivals %d departures %d drops %d" $rarr $rdep $rdrop]
    # Link crossings, counted the way tput's netsim counts `link_packets`
    # (one per packet per link it finished crossing): data crosses the
    # sender access link (= bottleneck arrivals), the bottleneck and the
    # receiver access link (= bottleneck departures, minus a few in flight at
    # the end); ACKs cross the three links of the reverse path (no reverse drops).
    set est [expr {$farr + 2 * $fdep + 3 * $rdep}]
    puts [format "estimated link crossings: %d (= fwd arrivals + 2*fwd departures + 3*rev departures)" $est]
    if {$countall} {
        set n [expr {$fdep + $rdep}]
        foreach q $allqm { set n [expr {$n + [$q set pdepartures_]}] }
        puts [format "counted link departures (all links monitored): %d" $n]
    }

    set tot 0
    set min -1
    set max 0
    set sinkbytes 0
    for {set i 0} {$i < $nflows} {incr i} {
        # ack_ is the highest cumulative ACK (packet sequence number). Packet 0
        # is ns-2's 40-byte SYN stand-in (syn_ true), so ack_ data packets of
        # packetSize_ bytes have been acknowledged.
        set b [expr {max(0, [$tcp($i) set ack_]) * $pktsize}]
        set tot [expr {$tot + $b}]
        if {$min < 0 || $b < $min} { set min $b }
        if {$b > $max} { set max $b }
        set sinkbytes [expr {$sinkbytes + [$sink($i) set bytes_]}]
    }
    set sq 0.0
    set mean [expr {double($tot) / $nflows}]
    for {set i 0} {$i < $nflows} {incr i} {
        set b [expr {max(0, [$tcp($i) set ack_]) * $pktsize}]
        set sq [expr {$sq + double($b) * $b}]
    }
    # (ns-2 traps floating-point exceptions, so avoid 0/0 on very short runs.)
    set jain [expr {$sq > 0 ? double($tot) * $tot / ($nflows * $sq) : 0.0}]
    puts [format "flows %d, %.1f s: acked %.1f MB total (sink bytes_, wire bytes incl. 40 B headers and duplicates: %.1f MB), aggregate goodput %.2f Mbit/s" \
        $nflows $duration [expr {$tot / 1e6}] [expr {$sinkbytes / 1e6}] [expr {$tot * 8.0 / $duration / 1e6}]]
    puts [format "per flow goodput Mbit/s: mean %.3f min %.3f max %.3f, Jain index %.4f" \
        [expr {$mean * 8.0 / $duration / 1e6}] [expr {$min * 8.0 / $duration / 1e6}] \
        [expr {$max * 8.0 / $duration / 1e6}] $jain]
    exit 0
}

$ns at $duration "finish"
$ns run
