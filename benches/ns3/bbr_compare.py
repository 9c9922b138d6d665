#!/usr/bin/env python3
"""ns-3's side of the BBR cross-check (benches/benches/bbr_compare.rs).

The same dumbbell as `tput_benches::bbr_compare`: a 100 Mbit/s bottleneck
with 20 ms of delay, 1 Gbit/s access links of 2.5 ms on each side (a 50 ms
RTT), a DropTail buffer of 1 BDP (509 packets) or 0.1 BDP (51 packets) at
the bottleneck (a FIFO queue disc of one packet less, the device holding
the packet being sent), 1228-byte packets (a 1176-byte TCP
segment with IPv4, TCP and timestamp headers), flows starting within the
first 100 ms. On each buffer: 1, 2 and 10 flows of ns-3's TcpBbr (a BBRv1
after Linux's tcp_bbr.c), then TcpBbr beside one TcpCubic and beside one
TcpNewReno flow.

Columns as in the Rust bench: bottleneck utilisation (bytes sent over the
bottleneck / its capacity over the duration), goodput, queueing delay p50
and p99 (the queue's bytes sampled every 10 ms, over the rate), loss rate
(drops / packets offered to the bottleneck queue), Jain's index over the
flows' goodputs, the first group's share, and time in ProbeRTT: TcpBbr keeps
its state private, so it is read from its window, which is 4 segments in
ProbeRTT (and only there, short of a retransmission timeout).

Needs the `ns3` package from PyPI (`pip install ns3`; measured with 3.44).
Usage: python3 benches/ns3/bbr_compare.py [--short | --secs S] [FILTER...]
(30 s per case; --short: 5 s; --secs: S seconds; FILTER, e.g. "0.1 BDP", runs only the cases
whose name contains it). Rows print as the cases finish: the 30-s cases
take minutes each (ns-3 simulates every TCP segment and ACK).
"""

import sys
import time

try:
    from ns import ns
except ImportError:  # pragma: no cover
    sys.exit("bbr_compare.py: needs ns-3's Python bindings: pip install ns3")

RATE_BPS = 100_000_000
RTT_S = 0.050
WIRE_PACKET = 1228
SEGMENT = 1176  # 1228 - 20 (IPv4) - 20 (TCP) - 12 (timestamps)

ns.cppyy.cppdef(
    r"""
using namespace ns3;

namespace bbrcmp {

Ptr<QueueDisc> g_queue;
std::vector<double> g_qbytes;
uint64_t g_drops = 0, g_enq = 0, g_tx_bytes = 0;
double g_end = 0;
// Per flow: seconds spent with cwnd <= 4 segments, and since when.
std::vector<double> g_small_secs;
std::vector<double> g_small_since;
uint32_t g_segment = 0;

void Sample() {
    g_qbytes.push_back(g_queue->GetNBytes());
    if (Simulator::Now().GetSeconds() + 0.010 <= g_end + 1e-9) {
        Simulator::Schedule(MilliSeconds(10), &Sample);
    }
}
void OnDrop(Ptr<const QueueDiscItem>) { g_drops++; }
void OnEnqueue(Ptr<const QueueDiscItem>) { g_enq++; }
void OnTx(Ptr<const Packet> p) { g_tx_bytes += p->GetSize(); }

void OnCwnd(uint32_t flow, uint32_t, uint32_t now_cwnd) {
    double t = Simulator::Now().GetSeconds();
    bool small = now_cwnd <= 4 * g_segment;
    if (small && g_small_since[flow] < 0) {
        g_small_since[flow] = t;
    } else if (!small && g_small_since[flow] >= 0) {
        g_small_secs[flow] += t - g_small_since[flow];
        g_small_since[flow] = -1;
    }
}

void HookCwnd(Ptr<Application> app, uint32_t flow) {
    Ptr<Socket> s = DynamicCast<BulkSendApplication>(app)->GetSocket();
    if (s) {
        s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, flow));
    }
}

// Returns: utilisation, then per flow: goodput (bit/s), start (s), ProbeRTT seconds;
// the queue samples are left in g_qbytes.
std::vector<double> Run(std::vector<std::string> tcps, uint32_t queue_packets, double secs, uint32_t seed) {
    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(1);
    g_qbytes.clear();
    g_drops = g_enq = g_tx_bytes = 0;
    g_end = secs;
    g_segment = 1176;
    size_t n = tcps.size();
    g_small_secs.assign(n, 0.0);
    g_small_since.assign(n, -1.0);

    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(g_segment));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(8 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(8 << 20));

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
    neck.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
    neck.SetChannelAttribute("Delay", StringValue("20ms"));
    // The buffer is a FIFO queue disc; the device holds the one packet
    // being sent (as in ns-3's own tcp-bbr-example).
    neck.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));

    Ipv4AddressHelper addr;
    TrafficControlHelper tch;
    NetDeviceContainer bottleneck = neck.Install(routers.Get(0), routers.Get(1));
    addr.SetBase("10.0.0.0", "255.255.255.0");
    tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(std::to_string(queue_packets - 1) + "p"));
    QueueDiscContainer qdiscs = tch.Install(bottleneck);
    addr.Assign(bottleneck);
    std::vector<Ipv4Address> sinks;
    for (size_t i = 0; i < n; i++) {
        NetDeviceContainer l = access.Install(left.Get(i), routers.Get(0));
        NetDeviceContainer r = access.Install(routers.Get(1), right.Get(i));
        addr.SetBase(Ipv4Address((10u << 24) | ((1 + 2 * i) << 8)), "255.255.255.0");
        addr.Assign(l);
        addr.SetBase(Ipv4Address((10u << 24) | ((2 + 2 * i) << 8)), "255.255.255.0");
        Ipv4InterfaceContainer ri = addr.Assign(r);
        tch.Uninstall(l);
        tch.Uninstall(r);
        sinks.push_back(ri.GetAddress(1));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    Ptr<PointToPointNetDevice> dev = DynamicCast<PointToPointNetDevice>(bottleneck.Get(0));
    g_queue = qdiscs.Get(0);
    g_queue->TraceConnectWithoutContext("Drop", MakeCallback(&OnDrop));
    if (!g_queue->TraceConnectWithoutContext("Enqueue", MakeCallback(&OnEnqueue))) {
        NS_FATAL_ERROR("no Enqueue trace");
    }
    dev->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnTx));

    Ptr<UniformRandomVariable> jitter = CreateObject<UniformRandomVariable>();
    std::vector<Ptr<PacketSink>> sinkApps;
    std::vector<double> starts;
    for (size_t i = 0; i < n; i++) {
        TypeId tid = TypeId::LookupByName("ns3::" + tcps[i]);
        std::string path = "/NodeList/" + std::to_string(left.Get(i)->GetId()) + "/$ns3::TcpL4Protocol/SocketType";
        Config::Set(path, TypeIdValue(tid));
        uint16_t port = 5000 + i;
        BulkSendHelper send("ns3::TcpSocketFactory", InetSocketAddress(sinks[i], port));
        send.SetAttribute("MaxBytes", UintegerValue(0));
        ApplicationContainer s = send.Install(left.Get(i));
        double start = jitter->GetValue(0.0, 0.1);
        starts.push_back(start);
        s.Start(Seconds(start));
        s.Stop(Seconds(secs));
        Simulator::Schedule(Seconds(start) + MicroSeconds(1), &HookCwnd, s.Get(0), (uint32_t)i);
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer k = sink.Install(right.Get(i));
        k.Start(Seconds(0));
        sinkApps.push_back(DynamicCast<PacketSink>(k.Get(0)));
    }
    Simulator::Schedule(MilliSeconds(10), &Sample);
    Simulator::Stop(Seconds(secs));
    Simulator::Run();

    std::vector<double> out;
    out.push_back(g_tx_bytes * 8.0 / (100e6 * secs));
    for (size_t i = 0; i < n; i++) {
        double active = secs - starts[i];
        if (g_small_since[i] >= 0) {
            g_small_secs[i] += secs - g_small_since[i];
        }
        out.push_back(sinkApps[i]->GetTotalRx() * 8.0 / active);
        out.push_back(starts[i]);
        out.push_back(g_small_secs[i]);
    }
    Simulator::Destroy();
    return out;
}

}  // namespace bbrcmp
"""
)


def ns3_version():
    """The installed ns3 package's version (PyPI's ns3 3.44.post0 is ns-3.44)."""
    try:
        from importlib.metadata import version

        return version("ns3")
    except Exception:  # noqa: BLE001 - any failure: unknown
        return "(unknown version)"


def bdp_packets():
    return round(RATE_BPS * RTT_S / 8 / WIRE_PACKET)


def cases():
    out = []
    for buffer_bdp in (1.0, 0.1):
        for n in (1, 2, 10):
            out.append((buffer_bdp, [("TcpBbr", n)]))
        for other in ("TcpCubic", "TcpNewReno"):
            out.append((buffer_bdp, [("TcpBbr", 1), (other, 1)]))
    return out


def name(buffer_bdp, groups):
    flows = [t if n == 1 else f"{n} x {t}" for t, n in groups]
    return f"{buffer_bdp:.1f} BDP  " + " + ".join(flows)


def quantile(sorted_values, q):
    if not sorted_values:
        return 0.0
    rank = min(max(int(-(-q * len(sorted_values) // 1)), 1), len(sorted_values))
    return sorted_values[rank - 1]


def jain(x):
    squares = sum(v * v for v in x)
    return 0.0 if not x or squares == 0 else sum(x) ** 2 / (len(x) * squares)


def run_case(buffer_bdp, groups, secs):
    tcps = [t for t, n in groups for _ in range(n)]
    queue = max(2, round(bdp_packets() * buffer_bdp))
    out = list(ns.cppyy.gbl.bbrcmp.Run(tcps, queue, secs, 1))
    util = out[0]
    flows = [out[1 + 3 * i : 4 + 3 * i] for i in range(len(tcps))]
    goodputs = [f[0] for f in flows]
    delays = sorted(b * 8 / RATE_BPS * 1e3 for b in ns.cppyy.gbl.bbrcmp.g_qbytes)
    bbm = ns.cppyy.gbl.bbrcmp
    offered = bbm.g_enq + bbm.g_drops
    first = sum(goodputs[: groups[0][1]])
    probe = [f[2] / (secs - f[1]) for f, t in zip(flows, tcps) if t == "TcpBbr"]
    return {
        "case": name(buffer_bdp, groups),
        "util": util,
        "goodput": sum(goodputs) / 1e6,
        "p50": quantile(delays, 0.5),
        "p99": quantile(delays, 0.99),
        "loss": 100.0 * bbm.g_drops / offered if offered else 0.0,
        "jain": jain(goodputs),
        "share1": first / sum(goodputs) if sum(goodputs) > 0 else 0.0,
        "probe_rtt": 100.0 * sum(probe) / len(probe) if probe else None,
    }


def row_line(r):
    probe = "-" if r["probe_rtt"] is None else f"{r['probe_rtt']:.1f}"
    return (
        f"{r['case']:<34} {r['util']:>6.3f} {r['goodput']:>8.1f} {r['p50']:>8.1f} {r['p99']:>8.1f} "
        f"{r['loss']:>8.3f} {r['jain']:>6.3f} {r['share1']:>7.3f} {probe:>8}"
    )


def main():
    args = sys.argv[1:]
    short = "--short" in args
    filters = [a for a in args if not a.startswith("-")]
    secs = 5.0 if short else 30.0
    if "--secs" in args:
        secs = float(args[args.index("--secs") + 1])
        filters = [a for a in filters if a != args[args.index("--secs") + 1]]
    started = time.time()
    print(f"ns-3 {ns3_version()}: 100 Mbit/s, 50 ms RTT dumbbell, {secs:.0f} s per case\n")
    print(f"{'case':<34} {'util':>6} {'goodput':>8} {'qd p50':>8} {'qd p99':>8} {'loss':>8} {'jain':>6} {'share1':>7} {'ProbeRTT':>8}")
    print(f"{'':<34} {'':>6} {'Mbit/s':>8} {'ms':>8} {'ms':>8} {'%':>8} {'':>6} {'':>7} {'% time':>8}", flush=True)
    for buffer_bdp, groups in cases():
        if filters and not any(f in name(buffer_bdp, groups) for f in filters):
            continue
        print(row_line(run_case(buffer_bdp, groups, secs)), flush=True)
    print(f"\n({time.time() - started:.1f} s wall)")


if __name__ == "__main__":
    main()
