//! Counting retransmission timeouts in simulated time (seed 001's timeout
//! mechanism; a plan point asks for it with [`crate::plan::Keep::timeouts`]).
//!
//! quinn-proto's path statistics have no PTO count, so this counts its own
//! `trace!("PTO fired")` event (emitted once per probe-timeout expiry, RFC
//! 9002 §6.2.1, with the number of consecutive PTOs before it in its `count`
//! field), timed by the `sim_timeout` span the simulator's QUIC host opens
//! around every timer it runs. The TCP model emits one `trace` event per
//! retransmission timeout (RFC 6298 §5) with its time and consecutive count.
//!
//! A [`TimeoutCounter`] is a `tracing` subscriber that is interested in
//! exactly these three callsites; install it for one run with
//! [`TimeoutCounter::run`] (thread-local, so parallel runs do not mix).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};

/// One timeout: when, and how many consecutive timeouts it makes (this one
/// included).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Timeout {
    /// Simulated time, seconds.
    pub at_secs: f64,
    /// Consecutive timeouts so far, this one included (1 = the first after
    /// an acknowledgement).
    pub consecutive: u32,
}

#[derive(Debug, Default)]
struct State {
    /// Open `sim_timeout` spans: (simulated ns, the host is a server).
    spans: HashMap<u64, (u64, bool)>,
    /// The span entered now.
    current: Vec<u64>,
    timeouts: Vec<Timeout>,
}

/// A `tracing` subscriber recording the sending side's timeouts (see the
/// module docs).
#[derive(Debug, Clone, Default)]
pub struct TimeoutCounter {
    state: Arc<Mutex<State>>,
    next_id: Arc<AtomicU64>,
}

fn kind(meta: &Metadata<'_>) -> Option<Kind> {
    let has = |name: &str| meta.fields().field(name).is_some();
    if meta.is_span() && meta.name() == "sim_timeout" {
        Some(Kind::Span)
    } else if meta.is_event() && meta.target().starts_with("quinn_proto") && has("in_flight") && has("count") {
        Some(Kind::Pto)
    } else if meta.is_event() && meta.target().starts_with("tput_tcp") && has("at_ns") && has("consecutive") {
        Some(Kind::Rto)
    } else {
        None
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Span,
    Pto,
    Rto,
}

/// Collects the numeric and text fields a callsite of interest carries.
#[derive(Default)]
struct Fields {
    now_ns: Option<u64>,
    server: bool,
    count: Option<u64>,
    at_ns: Option<u64>,
    consecutive: Option<u64>,
    message: String,
}

impl Visit for Fields {
    fn record_u64(&mut self, field: &Field, value: u64) {
        match field.name() {
            "now_ns" => self.now_ns = Some(value),
            "count" => self.count = Some(value),
            "at_ns" => self.at_ns = Some(value),
            "consecutive" => self.consecutive = Some(value),
            _ => {}
        }
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.record_u64(field, value.max(0) as u64);
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        if field.name() == "server" {
            self.server = value;
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        }
    }
}

impl TimeoutCounter {
    /// Runs `f` with this subscriber as the thread's default; returns its
    /// result and the timeouts recorded meanwhile, in time order.
    pub fn run<R>(f: impl FnOnce() -> R) -> (R, Vec<Timeout>) {
        let counter = TimeoutCounter::default();
        let r = tracing::subscriber::with_default(counter.clone(), f);
        let mut t = std::mem::take(&mut counter.state.lock().expect("not poisoned").timeouts);
        t.sort_by(|a, b| a.at_secs.total_cmp(&b.at_secs));
        (r, t)
    }
}

impl Subscriber for TimeoutCounter {
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        if kind(meta).is_some() {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        kind(meta).is_some()
    }

    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let mut f = Fields::default();
        attrs.record(&mut f);
        if let Some(ns) = f.now_ns {
            self.state
                .lock()
                .expect("not poisoned")
                .spans
                .insert(id, (ns, f.server));
        }
        Id::from_u64(id)
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let Some(k) = kind(event.metadata()) else { return };
        let mut f = Fields::default();
        event.record(&mut f);
        let mut st = self.state.lock().expect("not poisoned");
        match k {
            Kind::Pto if f.message.contains("PTO fired") => {
                let Some(&(now, server)) = st.current.last().and_then(|id| st.spans.get(id)) else {
                    return;
                };
                if !server {
                    st.timeouts.push(Timeout {
                        at_secs: now as f64 / 1e9,
                        consecutive: f.count.unwrap_or(0) as u32 + 1,
                    });
                }
            }
            Kind::Rto => {
                if let (Some(at), Some(c)) = (f.at_ns, f.consecutive) {
                    st.timeouts.push(Timeout {
                        at_secs: at as f64 / 1e9,
                        consecutive: c as u32,
                    });
                }
            }
            _ => {}
        }
    }

    fn enter(&self, span: &Id) {
        self.state.lock().expect("not poisoned").current.push(span.into_u64());
    }

    fn exit(&self, span: &Id) {
        let mut st = self.state.lock().expect("not poisoned");
        if st.current.last() == Some(&span.into_u64()) {
            st.current.pop();
        }
    }

    fn try_close(&self, id: Id) -> bool {
        self.state.lock().expect("not poisoned").spans.remove(&id.into_u64());
        true
    }
}
