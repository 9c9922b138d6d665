# ber_compare.tcl -- ns-2 (2.35) side of seed 002's bit-error figure
# (`cargo bench -p tput-benches --bench seed002`, the `ber` figure's ns-2
# column; module tput_benches::seed002).
#
# Seed 002's path, all links duplex:
#   S --140Mb/0ms DropTail(1000)--> R1 --36.864Mb/(rtt/2) DropTail(2000)--> R2
#     --140Mb/0ms DropTail(1000)--> D
# Random packet loss on R1 -> R2 only (ACKs see none): ErrorModel in packet
# units with rate_ = 1 - (1 - ber)^(8 * 1228), the loss probability of a
# 1228-byte packet at bit error rate `ber`, drawn from an RNG seeded with
# `seed`. One Agent/TCP/Sack1 -> Agent/TCPSink/Sack1 (or Agent/TCP/Newreno ->
# Agent/TCPSink), packetSize_ 1188 (1228 bytes with ns-2's 40-byte TCP/IP
# header), window_ 1765 packets (2 MiB, the receive window of the model's
# run), no delayed ACKs, minrto_ 0.2 s, every other setting ns-2's default;
# one FTP source from t = 0 to the end.
#
# Usage: ns ber_compare.tcl sack|newreno rtt_ms ber seed duration_s warmup_s
#
# Output:
#   flow <bytes acked from warmup to the end> <timeouts (nrexmit_)> <retransmitted packets>
#   errors <packets the error model dropped>

if {$argc != 6} {
    puts stderr "usage: ns ber_compare.tcl sack|newreno rtt_ms ber seed duration_s warmup_s"
    exit 1
}
set variant [lindex $argv 0]
set rtt_ms [lindex $argv 1]
set ber [lindex $argv 2]
set seed [lindex $argv 3]
set duration [lindex $argv 4]
set warmup [lindex $argv 5]
set pktsize 1188

switch -- $variant {
    sack { set agent Agent/TCP/Sack1; set sinktype Agent/TCPSink/Sack1 }
    newreno { set agent Agent/TCP/Newreno; set sinktype Agent/TCPSink }
    default { puts stderr "variant must be sack or newreno"; exit 1 }
}

set ns [new Simulator]
Agent/TCP set packetSize_ $pktsize
Agent/TCP set window_ 1765
Agent/TCP set minrto_ 0.2

set S [$ns node]
set R1 [$ns node]
set R2 [$ns node]
set D [$ns node]
set half [expr {$rtt_ms / 2.0}]ms
$ns duplex-link $S $R1 140Mb 0ms DropTail
$ns duplex-link $R1 $R2 36.864Mb $half DropTail
$ns duplex-link $R2 $D 140Mb 0ms DropTail
foreach {a b} [list $S $R1 $R1 $S $R2 $D $D $R2] {
    $ns queue-limit $a $b 1000
}
$ns queue-limit $R1 $R2 2000
$ns queue-limit $R2 $R1 2000

set errors [new Agent/LossMonitor]
$ns attach-agent $R2 $errors
if {$ber > 0} {
    set rng [new RNG]
    $rng seed $seed
    set u [new RandomVariable/Uniform]
    $u use-rng $rng
    set em [new ErrorModel]
    $em unit pkt
    $em set rate_ [expr {1.0 - pow(1.0 - $ber, 8 * 1228)}]
    $em ranvar $u
    $ns lossmodel $em $R1 $R2
    $em drop-target $errors
}

set tcp [new $agent]
set sink [new $sinktype]
$ns attach-agent $S $tcp
$ns attach-agent $D $sink
$ns connect $tcp $sink
set ftp [new Application/FTP]
$ftp attach-agent $tcp
$ns at 0.0 "$ftp start"

set at_warmup 0
proc mark {} {
    global tcp at_warmup
    set at_warmup [expr {max(0, [$tcp set ack_])}]
}
$ns at $warmup "mark"

proc finish {} {
    global tcp pktsize errors at_warmup
    set acked [expr {(max(0, [$tcp set ack_]) - $at_warmup) * $pktsize}]
    puts "flow $acked [$tcp set nrexmit_] [$tcp set nrexmitpack_]"
    puts "errors [$errors set npkts_]"
    exit 0
}
$ns at $duration "finish"
$ns run
