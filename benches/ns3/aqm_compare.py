#!/usr/bin/env python3
"""ns-3's side of the CoDel and FQ-CoDel cross-check (benches/benches/aqm_check.rs).

The same dumbbell as `tput_benches::aqm_check`: a 20 Mbit/s bottleneck with
20 ms of delay, 1 Gbit/s access links of 2.5 ms on each side (a 50 ms RTT),
its queue disc `CoDelQueueDisc` or `FqCoDelQueueDisc` (target 5 ms, interval
100 ms, limit 1000 packets, no ECN; FQ-CoDel with 1024 flows and a quantum of
1514 bytes; the device behind it holds the one packet being sent, as in
ns-3's own examples), 1228-byte packets (a 1188-byte TCP segment with IPv4
and TCP headers: no timestamps), TCP with SACK, an initial window of 10, no
delayed ACKs, a minimum RTO of 200 ms and ns-3's default PRR recovery. The
flows start uniformly in [0, 1) s and send until the end. Mixes: 1 and 10
TcpNewReno flows, and one TcpCubic (HyStart off) beside one TcpBbr.

Usage: python3 benches/ns3/aqm_compare.py codel|fq_codel 1newreno|10newreno|cubic+bbr SEED SECS

Prints one record (the Rust bench parses it):
  result <aqm> <mix> <seed> <secs> <util> <sojourn p50 ms> <sojourn p99 ms>
         <aqm drops> <overflow drops> <marks> <packets sent> <bytes of flow 0> <bytes of flow 1> ...
util: busy time of the bottleneck's transmitter over the run; sojourn: every
packet's time in the queue disc (its SojournTime trace); aqm drops: CoDel's
"Target exceeded drop" (FQ-CoDel's flow queues' included); overflow:
"Overlimit drop" (FQ-CoDel drops from the fattest flow, up to DropBatchSize =
64 at a time); bytes: payload received
by each flow's sink.

Needs the `ns3` package from PyPI (`pip install ns3`; measured with 3.44).
"""

import sys

try:
    from ns import ns
except ImportError:  # pragma: no cover
    sys.exit("aqm_compare.py: needs ns-3's Python bindings: pip install ns3")

MIXES = {
    "1newreno": ["TcpNewReno"],
    "10newreno": ["TcpNewReno"] * 10,
    "cubic+bbr": ["TcpCubic", "TcpBbr"],
}

ns.cppyy.cppdef(
    r"""
using namespace ns3;

namespace aqmcmp {

std::vector<double> g_sojourn_ms;
uint64_t g_tx_bytes = 0, g_tx_packets = 0;

void OnSojourn(Time t) { g_sojourn_ms.push_back(t.GetSeconds() * 1e3); }
void OnTx(Ptr<const Packet> p) { g_tx_bytes += p->GetSize(); g_tx_packets++; }

// Returns: utilisation, aqm drops, overflow drops, marks, packets sent, then
// per flow its received payload bytes; the sojourn times stay in g_sojourn_ms.
std::vector<double> Run(std::string aqm, std::vector<std::string> tcps, uint32_t seed, double secs) {
    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(1);
    g_sojourn_ms.clear();
    g_tx_bytes = g_tx_packets = 0;
    size_t n = tcps.size();

    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1188));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(8 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(8 << 20));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(false));

    NodeContainer left, right, routers;
    left.Create(n);
    right.Create(n);
    routers.Create(2);
    InternetStackHelper stack;
    stack.InstallAll();

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
    access.SetChannelAttribute("Delay", StringValue("2.5ms"));
    access.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("10000p"));
    PointToPointHelper neck;
    neck.SetDeviceAttribute("DataRate", StringValue("20Mbps"));
    neck.SetChannelAttribute("Delay", StringValue("20ms"));
    neck.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));

    Ipv4AddressHelper addr;
    TrafficControlHelper tch;
    if (aqm == "codel") {
        tch.SetRootQueueDisc("ns3::CoDelQueueDisc", "MaxSize", StringValue("1000p"),
                             "Target", StringValue("5ms"), "Interval", StringValue("100ms"),
                             "UseEcn", BooleanValue(false));
    } else {
        tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "MaxSize", StringValue("1000p"),
                             "Target", StringValue("5ms"), "Interval", StringValue("100ms"),
                             "UseEcn", BooleanValue(false), "Flows", UintegerValue(1024));
    }
    NetDeviceContainer bottleneck = neck.Install(routers.Get(0), routers.Get(1));
    addr.SetBase("10.0.0.0", "255.255.255.0");
    QueueDiscContainer qdiscs = tch.Install(bottleneck);
    addr.Assign(bottleneck);
    TrafficControlHelper plain;
    std::vector<Ipv4Address> sinks;
    for (size_t i = 0; i < n; i++) {
        NetDeviceContainer l = access.Install(left.Get(i), routers.Get(0));
        NetDeviceContainer r = access.Install(routers.Get(1), right.Get(i));
        addr.SetBase(Ipv4Address((10u << 24) | ((1 + 2 * i) << 8)), "255.255.255.0");
        addr.Assign(l);
        addr.SetBase(Ipv4Address((10u << 24) | ((2 + 2 * i) << 8)), "255.255.255.0");
        Ipv4InterfaceContainer ri = addr.Assign(r);
        plain.Uninstall(l);
        plain.Uninstall(r);
        sinks.push_back(ri.GetAddress(1));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    Ptr<QueueDisc> q = qdiscs.Get(0);
    // FQ-CoDel's quantum is no attribute: set on both directions' queue
    // discs before they initialise (else it is the device's MTU).
    for (uint32_t i = 0; i < qdiscs.GetN(); i++) {
        Ptr<FqCoDelQueueDisc> fq = DynamicCast<FqCoDelQueueDisc>(qdiscs.Get(i));
        if (fq) {
            fq->SetQuantum(1514);
        }
    }
    if (!q->TraceConnectWithoutContext("SojournTime", MakeCallback(&OnSojourn))) {
        NS_FATAL_ERROR("no SojournTime trace");
    }
    Ptr<PointToPointNetDevice> dev = DynamicCast<PointToPointNetDevice>(bottleneck.Get(0));
    dev->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnTx));

    Ptr<UniformRandomVariable> jitter = CreateObject<UniformRandomVariable>();
    std::vector<Ptr<PacketSink>> sinkApps;
    for (size_t i = 0; i < n; i++) {
        TypeId tid = TypeId::LookupByName("ns3::" + tcps[i]);
        std::string path = "/NodeList/" + std::to_string(left.Get(i)->GetId()) + "/$ns3::TcpL4Protocol/SocketType";
        Config::Set(path, TypeIdValue(tid));
        uint16_t port = 5000 + i;
        BulkSendHelper send("ns3::TcpSocketFactory", InetSocketAddress(sinks[i], port));
        send.SetAttribute("MaxBytes", UintegerValue(0));
        send.SetAttribute("SendSize", UintegerValue(1188 * 8));
        ApplicationContainer s = send.Install(left.Get(i));
        s.Start(Seconds(jitter->GetValue(0.0, 1.0)));
        s.Stop(Seconds(secs));
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer k = sink.Install(right.Get(i));
        k.Start(Seconds(0));
        sinkApps.push_back(DynamicCast<PacketSink>(k.Get(0)));
    }
    Simulator::Stop(Seconds(secs));
    Simulator::Run();

    const QueueDisc::Stats& st = q->GetStats();
    std::vector<double> out;
    // PPP adds 2 bytes per packet on the wire: the busy time counts them.
    out.push_back(g_tx_bytes * 8.0 / (20e6 * secs));
    // Drops by reason, a child's (FQ-CoDel's flow queues) prefixed with
    // "(Dropped by child queue disc) ": "Overlimit drop" is the limit's,
    // every other reason ("Target exceeded drop") CoDel's.
    uint64_t aqm_drops = 0, overflow = 0, marks = 0;
    for (const auto* m : {&st.nDroppedPacketsBeforeEnqueue, &st.nDroppedPacketsAfterDequeue}) {
        for (const auto& [reason, count] : *m) {
            if (reason.find("Overlimit") != std::string::npos) {
                overflow += count;
            } else {
                aqm_drops += count;
            }
        }
    }
    for (const auto& [reason, count] : st.nMarkedPackets) {
        marks += count;
    }
    out.push_back(aqm_drops);
    out.push_back(overflow);
    out.push_back(marks);
    out.push_back(g_tx_packets);
    for (size_t i = 0; i < n; i++) {
        out.push_back(sinkApps[i]->GetTotalRx());
    }
    Simulator::Destroy();
    return out;
}

}  // namespace aqmcmp
"""
)


def quantile(sorted_values, q):
    """The smallest value with at least q of the values at or below it."""
    if not sorted_values:
        return 0.0
    rank = min(max(int(-(-q * len(sorted_values) // 1)), 1), len(sorted_values))
    return sorted_values[rank - 1]


def main():
    args = sys.argv[1:]
    if len(args) != 4 or args[0] not in ("codel", "fq_codel") or args[1] not in MIXES:
        sys.exit("usage: aqm_compare.py codel|fq_codel 1newreno|10newreno|cubic+bbr SEED SECS")
    aqm, mix, seed, secs = args[0], args[1], int(args[2]), float(args[3])
    out = list(ns.cppyy.gbl.aqmcmp.Run(aqm, MIXES[mix], seed, secs))
    sojourn = sorted(ns.cppyy.gbl.aqmcmp.g_sojourn_ms)
    util, aqm_drops, overflow, marks, sent = out[:5]
    flows = " ".join(str(int(b)) for b in out[5:])
    print(
        f"result {aqm} {mix} {seed} {secs:g} {util:.5f} {quantile(sojourn, 0.5):.4f} {quantile(sojourn, 0.99):.4f} "
        f"{int(aqm_drops)} {int(overflow)} {int(marks)} {int(sent)} {flows}",
        flush=True,
    )


if __name__ == "__main__":
    main()
