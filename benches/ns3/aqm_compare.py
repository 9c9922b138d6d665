#!/usr/bin/env python3
"""ns-3's side of the CoDel and FQ-CoDel cross-check (benches/benches/aqm_check.rs).

The same dumbbell as `tput_benches::aqm_check`: a 20 Mbit/s bottleneck with
20 ms of delay, 1 Gbit/s access links of 2.5 ms on each side (a 50 ms RTT),
its queue disc `CoDelQueueDisc` or `FqCoDelQueueDisc` (target 5 ms, interval
100 ms, limit 1000 packets, no ECN; FQ-CoDel with 1024 flows and a quantum of
1514 bytes; the device behind it holds only the packet being sent, as our
link does: ns-3's own device queue, even of one packet, would take the next
packet from the queue disc a packet time early, so the script keeps the
device's transmit queue stopped while it sends), 1228-byte packets (a 1188-byte TCP segment with IPv4
and TCP headers: no timestamps), TCP with SACK, an initial window of 10, no
delayed ACKs, a minimum RTO of 200 ms and ns-3's default PRR recovery. The
flows start uniformly in [0, 1) s and send until the end. Mixes: 1 and 10
TcpNewReno flows, and one TcpCubic (HyStart off) beside one TcpBbr.

Usage: python3 benches/ns3/aqm_compare.py codel|fq_codel 1newreno|10newreno|cubic+bbr SEED SECS [--diag] [--device-queue] [--rfc-prr]

--device-queue: ns-3's stock set-up instead, a 1-packet device queue beside
the one being sent. --diag: also print `diag` lines (after the first 5 s
unless said): each packet's wait from its arrival at the queue disc to the
start of its transmission; the queue disc's and the device queue's
occupancy every 1 ms; the senders' mean congestion window every 10 ms;
their entries into fast recovery and timeouts; per FQ-CoDel flow queue the
packets received and dropped, and FQ-CoDel's new-flow entries and packets
sent from new and from old flows (RFC 8290 §4.1-4.4, watched from outside
after every enqueue and dequeue); per CoDel (each flow queue's, or the
single one) its entries into the dropping state, the count each starts
with (above 1: carried from the last episode, RFC 8289 §5.4), the drops
after the entry's own in each episode, and the time between a queue's
successive drops.

--rfc-prr: ns-3's PRR with DeliveredData counted as RFC 6937 §3 counts it
with SACK (the bytes newly acknowledged or SACKed). ns-3's TcpPrrRecovery
(`DoRecovery`) adds one segment for each duplicate ACK on top of the SACKed
bytes it is given, while prr_delivered < RecoverFS; this option's recovery
class is ns-3's without that addition. A diagnosis, not the bench's default.

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

// The device holds only the packet it is sending, as our link does: its
// transmit queue stays stopped while it sends, so the queue disc gives up
// its next packet when that packet's transmission can start, not a packet
// time earlier into the device's own queue. ns-3 wakes the queue (a
// scheduled Wake) as soon as the device takes a packet from its own queue,
// at the start of the transmission; the wake callback below, in place of
// the traffic-control layer's (which runs the queue disc), stops the queue
// again while a transmission is under way.
Ptr<NetDeviceQueue> g_txq;
Ptr<QueueDisc> g_root;
bool g_sending = false;
void OnWake() {
    if (g_sending) {
        g_txq->Stop();
    } else {
        g_root->Run();
    }
}
void OnTxBegin(Ptr<const Packet>) {
    g_sending = true;
    g_txq->Stop();
}
void WakeTxQueue() { g_txq->Wake(); }
// After TransmitComplete has returned (it looks at its own queue first).
void OnTxEnd(Ptr<const Packet>) {
    g_sending = false;
    Simulator::ScheduleNow(&WakeTxQueue);
}
// After the traffic-control layer has set its own callback (at initialisation).
void TakeOverWake() { g_txq->SetWakeCallback(MakeCallback(&OnWake)); }

// --rfc-prr: ns-3's PRR (`TcpPrrRecovery`) with DeliveredData as RFC 6937
// §3 counts it when SACK is in use: the bytes newly acknowledged or SACKed.
// ns-3's `TcpPrrRecovery::DoRecovery` adds a segment for every duplicate
// ACK while prr_delivered < RecoverFS, on top of the SACKed bytes it is
// given (RFC 6937 estimates one segment per duplicate ACK only without
// SACK): it sends about one segment per ACK instead of ssthresh/RecoverFS
// until prr_delivered reaches RecoverFS. Everything else as ns-3's.
class RfcPrrRecovery : public TcpRecoveryOps {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("aqmcmp::RfcPrrRecovery")
                                .SetParent<TcpRecoveryOps>()
                                .SetGroupName("Internet")
                                .AddConstructor<RfcPrrRecovery>();
        return tid;
    }
    RfcPrrRecovery() = default;
    RfcPrrRecovery(const RfcPrrRecovery& o) = default;
    std::string GetName() const override { return "RfcPrrRecovery"; }
    void EnterRecovery(Ptr<TcpSocketState> tcb, uint32_t, uint32_t, uint32_t deliveredBytes) override {
        m_prrOut = 0;
        m_prrDelivered = 0;
        m_recoveryFlightSize = tcb->m_bytesInFlight;
        DoRecovery(tcb, deliveredBytes, true);
    }
    void DoRecovery(Ptr<TcpSocketState> tcb, uint32_t deliveredBytes, bool) override {
        m_prrDelivered += deliveredBytes;
        int sendCount;
        if (tcb->m_bytesInFlight > tcb->m_ssThresh) {
            sendCount = std::ceil(m_prrDelivered * tcb->m_ssThresh * 1.0 / m_recoveryFlightSize) - m_prrOut;
        } else {
            int limit = std::max(m_prrDelivered - m_prrOut, deliveredBytes);
            if (tcb->m_isRetransDataAcked) {
                limit += tcb->m_segmentSize;
            }
            sendCount = std::min(limit, static_cast<int>(tcb->m_ssThresh - tcb->m_bytesInFlight));
        }
        sendCount = std::max(sendCount, static_cast<int>(m_prrOut > 0 ? 0 : tcb->m_segmentSize));
        tcb->m_cWnd = tcb->m_bytesInFlight + sendCount;
        tcb->m_cWndInfl = tcb->m_cWnd;
    }
    void ExitRecovery(Ptr<TcpSocketState> tcb) override { tcb->m_cWndInfl = tcb->m_cWnd; }
    void UpdateBytesSent(uint32_t bytesSent) override { m_prrOut += bytesSent; }
    Ptr<TcpRecoveryOps> Fork() override { return CopyObject<RfcPrrRecovery>(this); }

  private:
    uint32_t m_prrDelivered{0};
    uint32_t m_prrOut{0};
    uint32_t m_recoveryFlightSize{0};
};

// Diagnostics (--diag): each packet's wait from its arrival at the queue
// disc to the start of its transmission (keyed by the Packet object, which
// the queue disc hands to the device), the occupancy of the queue disc and
// of the device's own queue every millisecond, and each sender's congestion
// window every 10 ms, after the first 5 s.
bool g_diag = false;
std::map<const Packet*, Time> g_arrived;
std::vector<double> g_wait_ms;
std::map<uint32_t, uint64_t> g_qd_hist, g_dev_hist;
Ptr<QueueDisc> g_qd;
Ptr<Queue<Packet>> g_devq;
std::vector<Ptr<Node>> g_senders;
std::vector<uint32_t> g_cwnd;
std::vector<double> g_cwnd_sum;
uint64_t g_cwnd_samples = 0;

void OnTx(Ptr<const Packet> p) {
    g_tx_bytes += p->GetSize();
    g_tx_packets++;
    if (g_diag) {
        auto it = g_arrived.find(PeekPointer(p));
        if (it != g_arrived.end()) {
            if (Simulator::Now() > Seconds(5)) {
                g_wait_ms.push_back((Simulator::Now() - it->second).GetSeconds() * 1e3);
            }
            g_arrived.erase(it);
        }
    }
}
// FQ-CoDel's lists, seen from outside: after every enqueue and dequeue,
// each flow queue's status (inactive, new, old) and length. A queue that
// was inactive and is not is a new-flow entry (RFC 8290 §4.1.1, only an
// arrival makes one); the queue whose length fell at a dequeue sent the
// packet, from the list its status names.
std::vector<int> g_status;
std::vector<uint32_t> g_len;
uint64_t g_new_entries = 0, g_served_new = 0, g_served_old = 0;

// Each flow queue's CoDel (--diag): entries into the dropping state, the
// count it starts with (above 1: carried from the last episode, RFC 8289
// §5.4), the drops of each episode, and the time between a flow queue's
// successive drops.
struct CodelWatch {
    bool dropping = false;
    uint32_t count = 0;
    uint64_t entries = 0, carried = 0, drops = 0, episode_drops = 0;
    double last_drop = -1.0;
};
std::vector<CodelWatch*> g_watch;
std::map<uint64_t, uint64_t> g_episode_hist, g_entry_count_hist;
std::vector<double> g_drop_gap_ms;
// The count an episode starts with: read once the dequeue that entered the
// dropping state has set it (a traced value calls back only on a change, so
// the last value seen is the current one).
void RecordEntry(CodelWatch* w) {
    g_entry_count_hist[w->count]++;
    if (w->count > 1) {
        w->carried++;
    }
}
void OnDropState(CodelWatch* w, bool, bool now) {
    if (now && !w->dropping) {
        w->entries++;
        w->episode_drops = 0;
        Simulator::ScheduleNow(&RecordEntry, w);
    }
    if (!now && w->dropping) {
        g_episode_hist[w->episode_drops]++;
    }
    w->dropping = now;
}
void OnCount(CodelWatch* w, uint32_t, uint32_t now) { w->count = now; }
void OnChildDrop(CodelWatch* w, Ptr<const QueueDiscItem>, const char*) {
    w->drops++;
    w->episode_drops++;
    double t = Simulator::Now().GetSeconds();
    if (w->last_drop >= 0 && Simulator::Now() > Seconds(5)) {
        g_drop_gap_ms.push_back((t - w->last_drop) * 1e3);
    }
    w->last_drop = t;
}
void Watch(Ptr<QueueDisc> child) {
    CodelWatch* w = new CodelWatch();
    g_watch.push_back(w);
    child->TraceConnectWithoutContext("DropState", MakeBoundCallback(&OnDropState, w));
    child->TraceConnectWithoutContext("Count", MakeBoundCallback(&OnCount, w));
    child->TraceConnectWithoutContext("DropAfterDequeue",
                                      MakeBoundCallback(&OnChildDrop, w));
}

void ScanFlows(bool dequeue) {
    Ptr<FqCoDelQueueDisc> fq = DynamicCast<FqCoDelQueueDisc>(g_qd);
    if (!fq) {
        return;
    }
    for (uint32_t i = 0; i < fq->GetNQueueDiscClasses(); i++) {
        Ptr<FqCoDelFlow> flow = StaticCast<FqCoDelFlow>(fq->GetQueueDiscClass(i));
        int status = flow->GetStatus();
        uint32_t len = flow->GetQueueDisc()->GetNPackets();
        if (i >= g_status.size()) {
            g_status.push_back(FqCoDelFlow::INACTIVE);
            g_len.push_back(0);
            Watch(flow->GetQueueDisc());
        }
        if (g_status[i] == FqCoDelFlow::INACTIVE && status != FqCoDelFlow::INACTIVE) {
            g_new_entries++;
        }
        if (dequeue && len < g_len[i]) {
            (status == FqCoDelFlow::NEW_FLOW ? g_served_new : g_served_old)++;
        }
        g_status[i] = status;
        g_len[i] = len;
    }
}

void OnEnqueue(Ptr<const QueueDiscItem> item) {
    g_arrived[PeekPointer(item->GetPacket())] = Simulator::Now();
    ScanFlows(false);
}
void OnDequeue(Ptr<const QueueDiscItem>) { ScanFlows(true); }
void OnDrop(Ptr<const QueueDiscItem> item) { g_arrived.erase(PeekPointer(item->GetPacket())); }
void OnDropReason(Ptr<const QueueDiscItem> item, const char*) { OnDrop(item); }

void OnCwnd(size_t* i, uint32_t, uint32_t now) { g_cwnd[*i] = now; }
// Each change of a sender's slow-start threshold: the window then and the
// new threshold (segments), summed. A traced value calls back only when it
// changes, so a reduction to the threshold it already had is not seen.
double g_ssth_cwnd_sum = 0, g_ssth_sum = 0;
uint64_t g_ssth_n = 0;
void OnSsthresh(size_t* i, uint32_t, uint32_t now) {
    if (now < (1u << 30) && Simulator::Now() > Seconds(5)) {
        g_ssth_cwnd_sum += g_cwnd[*i] / 1188.0;
        g_ssth_sum += now / 1188.0;
        g_ssth_n++;
    }
}
// Entries into fast recovery and into loss recovery (a timeout), all senders.
uint64_t g_recoveries = 0, g_timeouts = 0;
void OnCongState(TcpSocketState::TcpCongState_t from, TcpSocketState::TcpCongState_t to) {
    if (to == TcpSocketState::CA_RECOVERY && from != TcpSocketState::CA_RECOVERY) {
        g_recoveries++;
    }
    if (to == TcpSocketState::CA_LOSS && from != TcpSocketState::CA_LOSS) {
        g_timeouts++;
    }
}
// Every sender's one socket exists once its application started (by 1 s).
void HookCwnd() {
    for (size_t i = 0; i < g_senders.size(); i++) {
        ObjectVectorValue socks;
        g_senders[i]->GetObject<TcpL4Protocol>()->GetAttribute("SocketList", socks);
        if (socks.GetN() == 0) {
            NS_FATAL_ERROR("sender " << i << " has no socket");
        }
        socks.Get(0)->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, new size_t(i)));
        socks.Get(0)->TraceConnectWithoutContext("CongState", MakeCallback(&OnCongState));
        socks.Get(0)->TraceConnectWithoutContext("SlowStartThreshold", MakeBoundCallback(&OnSsthresh, new size_t(i)));
    }
}

void Sample(uint64_t tick) {
    if (Simulator::Now() > Seconds(5)) {
        g_qd_hist[g_qd->GetNPackets()]++;
        g_dev_hist[g_devq->GetNPackets()]++;
        if (tick % 10 == 0) {
            for (size_t i = 0; i < g_cwnd.size(); i++) {
                g_cwnd_sum[i] += g_cwnd[i];
            }
            g_cwnd_samples++;
        }
    }
    Simulator::Schedule(MilliSeconds(1), &Sample, tick + 1);
}

// Returns: utilisation, aqm drops, overflow drops, marks, packets sent, then
// per flow its received payload bytes; the sojourn times stay in g_sojourn_ms.
std::vector<double> Run(std::string aqm, std::vector<std::string> tcps, uint32_t seed, double secs, bool diag,
                        bool device_queue, bool rfc_prr) {
    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(1);
    g_sojourn_ms.clear();
    g_tx_bytes = g_tx_packets = 0;
    size_t n = tcps.size();
    g_diag = diag;
    g_arrived.clear();
    g_wait_ms.clear();
    g_qd_hist.clear();
    g_dev_hist.clear();
    g_senders.clear();
    g_cwnd.assign(n, 0);
    g_cwnd_sum.assign(n, 0.0);
    g_cwnd_samples = 0;
    g_recoveries = g_timeouts = 0;
    g_status.clear();
    g_len.clear();
    g_new_entries = g_served_new = g_served_old = 0;
    g_watch.clear();
    g_episode_hist.clear();
    g_entry_count_hist.clear();
    g_drop_gap_ms.clear();
    g_ssth_cwnd_sum = g_ssth_sum = 0;
    g_ssth_n = 0;

    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1188));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(8 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(8 << 20));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(false));
    if (rfc_prr) {
        Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(RfcPrrRecovery::GetTypeId()));
    }

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
    if (!device_queue) {
        g_txq = dev->GetObject<NetDeviceQueueInterface>()->GetTxQueue(0);
        g_root = q;
        g_sending = false;
        Simulator::Schedule(Seconds(0), &TakeOverWake);
        dev->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnTxBegin));
        dev->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&OnTxEnd));
    }
    if (diag) {
        q->TraceConnectWithoutContext("Enqueue", MakeCallback(&OnEnqueue));
        q->TraceConnectWithoutContext("Drop", MakeCallback(&OnDrop));
        q->TraceConnectWithoutContext("Dequeue", MakeCallback(&OnDequeue));
        g_qd = q;
        if (aqm == "codel") {
            Watch(q);
        }
        g_devq = dev->GetQueue();
        for (size_t i = 0; i < n; i++) {
            g_senders.push_back(left.Get(i));
        }
        Simulator::Schedule(Seconds(1.5), &HookCwnd);
        Simulator::Schedule(MilliSeconds(1), &Sample, uint64_t(1));
    }

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
    if (diag) {
        // Per flow queue (FQ-CoDel's classes, in order of creation): packets
        // received and dropped (CoDel's drops inside the class).
        std::cout << "diag classes " << q->GetNQueueDiscClasses();
        for (uint32_t i = 0; i < q->GetNQueueDiscClasses(); i++) {
            const QueueDisc::Stats& cs = q->GetQueueDiscClass(i)->GetQueueDisc()->GetStats();
            std::cout << " " << cs.nTotalReceivedPackets << "/" << cs.nTotalDroppedPackets;
        }
        std::cout << std::endl;
        std::cout << "diag tcp fast recoveries " << g_recoveries << ", timeouts " << g_timeouts << " (from 1.5 s)" << std::endl;
        uint64_t entries = 0, carried = 0, drops = 0;
        for (auto* w : g_watch) {
            entries += w->entries;
            carried += w->carried;
            drops += w->drops;
        }
        std::cout << "diag codel per flow queue: dropping-state entries " << entries << " (count carried above 1: "
                  << carried << "), drops " << drops << "; drops per episode";
        for (const auto& [k, v] : g_episode_hist) {
            std::cout << " " << k << ":" << v;
        }
        std::cout << "; entry count";
        for (const auto& [k, v] : g_entry_count_hist) {
            std::cout << " " << k << ":" << v;
        }
        std::cout << std::endl;
        std::sort(g_drop_gap_ms.begin(), g_drop_gap_ms.end());
        if (!g_drop_gap_ms.empty()) {
            size_t m = g_drop_gap_ms.size();
            std::cout << "diag codel per flow queue: time between a queue's drops (after 5 s) p10 "
                      << g_drop_gap_ms[m / 10] << " p50 " << g_drop_gap_ms[m / 2] << " p90 " << g_drop_gap_ms[m * 9 / 10]
                      << " ms, " << m << " gaps" << std::endl;
        }
        std::cout << "diag tcp ssthresh changes (after 5 s) " << g_ssth_n << ", mean cwnd then "
                  << g_ssth_cwnd_sum / std::max<uint64_t>(g_ssth_n, 1) << ", mean new ssthresh "
                  << g_ssth_sum / std::max<uint64_t>(g_ssth_n, 1) << " segments" << std::endl;
        if (aqm == "fq_codel") {
            std::cout << "diag fq_codel new-flow entries " << g_new_entries << ", packets sent from new flows "
                      << g_served_new << ", from old flows " << g_served_old << std::endl;
        }
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


def histogram_summary(hist):
    """Mean, and the shares of samples at 0, <= 5, <= 10 and <= 20 packets."""
    total = sum(hist.values()) or 1
    mean = sum(k * v for k, v in hist.items()) / total
    share = lambda most: sum(v for k, v in hist.items() if k <= most) / total  # noqa: E731
    return f"mean {mean:.2f} P(0) {share(0):.3f} P(<=5) {share(5):.3f} P(<=10) {share(10):.3f} P(<=20) {share(20):.3f}"


def main():
    args = sys.argv[1:]
    diag = "--diag" in args
    device_queue = "--device-queue" in args
    rfc_prr = "--rfc-prr" in args
    args = [a for a in args if a not in ("--diag", "--device-queue", "--rfc-prr")]
    if len(args) != 4 or args[0] not in ("codel", "fq_codel") or args[1] not in MIXES:
        sys.exit("usage: aqm_compare.py codel|fq_codel 1newreno|10newreno|cubic+bbr SEED SECS [--diag] [--device-queue] [--rfc-prr]")
    aqm, mix, seed, secs = args[0], args[1], int(args[2]), float(args[3])
    g = ns.cppyy.gbl.aqmcmp
    out = list(g.Run(aqm, MIXES[mix], seed, secs, diag, device_queue, rfc_prr))
    sojourn = sorted(g.g_sojourn_ms)
    util, aqm_drops, overflow, marks, sent = out[:5]
    flows = " ".join(str(int(b)) for b in out[5:])
    if diag:
        wait = sorted(g.g_wait_ms)
        print(
            f"diag wait from queue-disc arrival to transmission (after 5 s): p50 {quantile(wait, 0.5):.3f} "
            f"p99 {quantile(wait, 0.99):.3f} mean {sum(wait) / max(len(wait), 1):.3f} ms, {len(wait)} packets"
        )
        print("diag queue disc, packets (1-ms samples after 5 s):", histogram_summary(dict(g.g_qd_hist)))
        print("diag device queue, packets (1-ms samples after 5 s):", histogram_summary(dict(g.g_dev_hist)))
        samples = max(g.g_cwnd_samples, 1)
        cwnd = [c / samples / 1188 for c in g.g_cwnd_sum]
        print("diag mean cwnd, segments (10-ms samples after 5 s):", " ".join(f"{c:.1f}" for c in cwnd), f"sum {sum(cwnd):.1f}")
    print(
        f"result {aqm} {mix} {seed} {secs:g} {util:.5f} {quantile(sojourn, 0.5):.4f} {quantile(sojourn, 0.99):.4f} "
        f"{int(aqm_drops)} {int(overflow)} {int(marks)} {int(sent)} {flows}",
        flush=True,
    )


if __name__ == "__main__":
    main()
