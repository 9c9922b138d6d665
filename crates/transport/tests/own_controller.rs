//! A controller of the user's own, written against tput-cc's trait, runs a
//! node's upload through [`TransferSpec::with_controller`]: every ACK reaches
//! it, the receiver verifies every byte, and a download, whose controller
//! the server builds from the request, is refused with a reason.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use tput_cc::{Ack, AlgorithmState, Congestion, CongestionController, Phase, QuinnFactory, Snapshot};
use tput_transport::proto::Direction;
use tput_transport::{
    ConfigError, Identity, Node, NodeConfig, Pair, SenderController, ServerTrust, SimOptions, TransferSpec,
};

/// A window of a fixed number of packets that counts the ACKs it sees.
#[derive(Debug, Clone)]
struct Counting {
    mss: u64,
    packets: u64,
    acks: Arc<AtomicU64>,
}

impl CongestionController for Counting {
    fn on_ack(&mut self, _now: Instant, _ack: &Ack) {
        self.acks.fetch_add(1, Ordering::Relaxed);
    }
    fn on_congestion(&mut self, _now: Instant, _event: &Congestion) {}
    fn on_mtu_update(&mut self, mtu: u16) {
        self.mss = u64::from(mtu);
    }
    fn window(&self) -> u64 {
        self.packets * self.mss
    }
    fn initial_window(&self) -> u64 {
        self.packets * self.mss
    }
    fn snapshot(&self) -> Snapshot {
        Snapshot::new(
            self.window(),
            None,
            Phase::CongestionAvoidance,
            AlgorithmState::Custom {
                name: "counting".into(),
                fields: vec![("acks".into(), self.acks.load(Ordering::Relaxed) as f64)],
            },
        )
    }
    fn clone_box(&self) -> Box<dyn CongestionController> {
        Box::new(self.clone())
    }
}

fn counting(acks: &Arc<AtomicU64>) -> QuinnFactory {
    let acks = acks.clone();
    QuinnFactory::from_fn(move |mtu| {
        Box::new(Counting {
            mss: u64::from(mtu),
            packets: 20,
            acks: acks.clone(),
        })
    })
}

fn pair() -> Pair {
    let config = NodeConfig::default().with_mtu_discovery(false);
    let identity = Identity::self_signed_from_seed(&["localhost"], 3).unwrap();
    let server = Node::simulated(config.clone(), Some(&identity), SimOptions::seeded(1)).unwrap();
    let client = Node::simulated(config, None, SimOptions::seeded(2)).unwrap();
    Pair::new(client, server, ServerTrust::Pinned(identity.fingerprint()))
}

#[test]
fn an_upload_runs_the_users_own_controller() {
    let acks = Arc::new(AtomicU64::new(0));
    let mut pair = pair();
    let spec = TransferSpec::upload(400_000, "newreno".parse().unwrap())
        .with_controller(SenderController::own(counting(&acks), "newreno".parse().unwrap()));
    pair.start(spec).unwrap();
    let outcome = pair.run(1_000_000, |_| {}).expect("the transfer finished");
    assert!(outcome.ok(), "{:?}", outcome.error);
    assert_eq!(
        outcome.receiver.as_ref().unwrap().bytes,
        400_000,
        "verified by the receiver"
    );
    // 400 kB in packets of at most 1 200 bytes: hundreds of ACKed packets,
    // each reported to the controller.
    let seen = acks.load(Ordering::Relaxed);
    assert!(seen >= 100, "the controller saw {seen} ACKs");
}

#[test]
fn a_download_with_an_own_controller_is_refused() {
    let acks = Arc::new(AtomicU64::new(0));
    let spec = TransferSpec::new(Direction::Download, "newreno".parse().unwrap())
        .with_bytes(Some(1000))
        .with_controller(SenderController::own(counting(&acks), "newreno".parse().unwrap()));
    let e = spec.validate().unwrap_err();
    assert_eq!(e, ConfigError::OwnControllerForDownload);
    assert!(e.to_string().contains("uploads only"), "{e}");
    assert!(pair().start(spec).is_err());
}
