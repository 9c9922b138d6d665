//! One aggregate target for several guarantee connections from one host: [`Aggregate`].

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

/// A coordinator for several [`Guarantee`](crate::Guarantee) controllers
/// pursuing one aggregate target. Clones share the same group; join with
/// [`Guarantee::with_aggregate`](crate::Guarantee::with_aggregate).
///
/// Yamanegi, Hasegawa and Murata's Fig. 7 runs five [`Guarantee`](crate::Guarantee) flows with 2% or
/// 4% of the bottleneck each and finds their success well below that of one
/// flow with the same aggregate target: each sizes its `k_max` from the *same*
/// available bandwidth `A`, so all five steepen together, overshoot together
/// and lose together. The paper names "an integrated controller for several
/// guarantee connections" as future work; [`Aggregate`] is that coordinator.
///
/// Members join with their own target `bw_i`; their weight is
/// `w_i = bw_i / Σ bw_j` over the members still connected. The coordinator
/// changes two inputs of each member's §2.4 rules and caps their floors:
///
/// 1. **Headroom.** With `A` the bandwidth available to the group (the oracle
///    counts every member as "own" traffic, so `A = P - background`, the same
///    value for all) and `r_j = cwnd_j / srtt_j` the current sending rate of
///    member `j`, member `i` is given
///    `A_i = r_i + w_i * max(A - Σ r_j, 0)`:
///    its own rate plus its weighted share of what the group leaves unused.
///    Its `k_max` (eqs. 4/5) and `avgA` use `A_i` instead of `A`. Together the
///    members can only grow into the unused bandwidth once, not `n` times.
/// 2. **Goal.** At each control slot end member `i` reports its carry
///    `c_i = g_i - tput_i` (§2.3); its next goal is `g_{i+1} = bw_i + w_i * Σ c_j`,
///    the group's pooled deficit (or surplus) split by weight, using each
///    member's latest carry. A member ahead of its share thus lowers the others'
///    goals and one behind raises them: the group chases the aggregate target,
///    not `n` separate ones. A member's carry returns to 0 when its evaluation
///    slot ends (the paper discards the carry there).
///
/// 3. **Floors** (floor mode, [`GuaranteeMode::Floor`](crate::GuaranteeMode)).
///    Each member's loss floor is a window a loss does not cut; together the
///    members' floor rates may claim at most [`FLOOR_SHARE`](Self::FLOOR_SHARE)
///    of the path's physical bandwidth `P` (from the bandwidth source or the
///    `physical=` parameter), past which every member's floor is scaled down
///    by the same factor. Without a known `P` there is no cap.
///
/// With one member rules 1 and 2 reduce to the paper's: `A_1 = A`, `g = bw + c`.
/// The rates `r_j` are the members' latest reports (at their latest ACK).
/// Members leave when their controller (and every clone of it) is dropped.
///
/// ```
/// use tput_cc::{Aggregate, Guarantee, GuaranteeConfig, units::Rate};
///
/// let group = Aggregate::new();
/// let flows: Vec<Guarantee> = (0..5)
///     .map(|_| Guarantee::new(GuaranteeConfig::new(Rate::from_mbit_per_sec(2)), 1200, None).with_aggregate(&group))
///     .collect();
/// assert_eq!(group.members(), 5);
/// assert_eq!(group.target_bytes_per_sec(), 5.0 * 250_000.0);
/// drop(flows);
/// assert_eq!(group.members(), 0);
/// ```
#[derive(Clone, Default)]
pub struct Aggregate {
    inner: Arc<Mutex<Vec<Member>>>,
}

#[derive(Debug, Clone, Copy)]
struct Member {
    /// `bw_i`, bytes per second.
    target: f64,
    /// `r_i`, bytes per second.
    rate: f64,
    /// `c_i`, bytes per second.
    carry: f64,
    /// The floor rate the member wants, bytes per second (floor mode).
    floor: f64,
    active: bool,
}

impl Aggregate {
    /// The share of the path's physical bandwidth `P` that the floors of a
    /// group's members may claim together (floor mode): half. A floor is a
    /// window a loss does not reduce; a group whose floors claimed the whole
    /// path would leave its competitors nothing to share and keep the queue
    /// full. Half leaves a competing Reno aggregate at least the other half,
    /// and the members still compete above their floors like Reno.
    pub const FLOOR_SHARE: f64 = 0.5;

    /// An empty group.
    pub fn new() -> Self {
        Self::default()
    }

    /// Members still connected.
    pub fn members(&self) -> usize {
        self.lock().iter().filter(|m| m.active).count()
    }

    /// The aggregate target `Σ bw_i` of the members still connected, bytes per second.
    pub fn target_bytes_per_sec(&self) -> f64 {
        self.lock().iter().filter(|m| m.active).map(|m| m.target).sum()
    }

    /// A poisoned lock only means another member panicked mid-update; the
    /// numbers inside are still plain floats, so carry on with them.
    fn lock(&self) -> MutexGuard<'_, Vec<Member>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn join(&self, target: f64) -> Membership {
        let mut members = self.lock();
        let seat = Member {
            target,
            rate: 0.0,
            carry: 0.0,
            floor: 0.0,
            active: true,
        };
        // Reuse the seat of a member that left, so that a group whose
        // connections come and go does not grow without bound.
        let id = match members.iter().position(|m| !m.active) {
            Some(free) => {
                members[free] = seat;
                free
            }
            None => {
                members.push(seat);
                members.len() - 1
            }
        };
        Membership {
            group: self.clone(),
            id,
        }
    }
}

impl fmt::Debug for Aggregate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let members = self.lock();
        f.debug_struct("Aggregate")
            .field("members", &members.iter().filter(|m| m.active).count())
            .field(
                "target_bytes_per_sec",
                &members.iter().filter(|m| m.active).map(|m| m.target).sum::<f64>(),
            )
            .finish()
    }
}

/// One controller's seat in an [`Aggregate`]; leaves the group when dropped.
#[derive(Debug)]
pub(crate) struct Membership {
    group: Aggregate,
    id: usize,
}

/// `(w_i, Σ_j x_j)` over the active members for the field `x`.
fn weight_and_sum(members: &[Member], id: usize, x: impl Fn(&Member) -> f64) -> (f64, f64) {
    let (mut targets, mut sum) = (0.0, 0.0);
    for m in members.iter().filter(|m| m.active) {
        targets += m.target;
        sum += x(m);
    }
    let w = if targets > 0.0 {
        members[id].target / targets
    } else {
        1.0
    };
    (w, sum)
}

impl Membership {
    /// Record the member's rate `r_i` and return its share `A_i` of the group's
    /// available bandwidth `available` (rule 1); `None` stays `None`.
    pub(crate) fn share_available(&self, available: Option<f64>, rate: f64) -> Option<f64> {
        let mut members = self.group.lock();
        members[self.id].rate = if rate.is_finite() { rate.max(0.0) } else { 0.0 };
        let a = available?;
        let (w, used) = weight_and_sum(&members, self.id, |m| m.rate);
        Some(members[self.id].rate + w * (a - used).max(0.0))
    }

    /// Record the member's carry `c_i` and return its share `w_i * Σ c_j` of
    /// the pooled carry (rule 2).
    pub(crate) fn pool_carry(&self, carry: f64) -> f64 {
        let mut members = self.group.lock();
        members[self.id].carry = if carry.is_finite() { carry } else { 0.0 };
        let (w, pooled) = weight_and_sum(&members, self.id, |m| m.carry);
        w * pooled
    }
}

impl Membership {
    /// Admission for the floor mode's floors: record the member's wanted floor
    /// rate and return the rate it may use. The members' floors together may
    /// claim at most [`Aggregate::FLOOR_SHARE`] of the path's physical
    /// bandwidth `physical` (bytes per second; unknown = infinite = no cap);
    /// past that every member's floor is scaled down by the same factor.
    pub(crate) fn admit_floor(&self, rate: f64, physical: f64) -> f64 {
        let mut members = self.group.lock();
        let rate = if rate.is_finite() { rate.max(0.0) } else { 0.0 };
        members[self.id].floor = rate;
        let wanted: f64 = members.iter().filter(|m| m.active).map(|m| m.floor).sum();
        let cap = Aggregate::FLOOR_SHARE * physical;
        if wanted > cap && wanted > 0.0 {
            rate * cap / wanted
        } else {
            rate
        }
    }
}

impl Drop for Membership {
    fn drop(&mut self) {
        let mut members = self.group.lock();
        let m = &mut members[self.id];
        m.active = false;
        m.rate = 0.0;
        m.carry = 0.0;
        m.floor = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_member_sees_the_papers_inputs() {
        let g = Aggregate::new();
        let m = g.join(100.0);
        assert_eq!(m.share_available(Some(1000.0), 300.0), Some(1000.0));
        assert_eq!(m.share_available(None, 300.0), None);
        assert_eq!(m.pool_carry(-40.0), -40.0);
    }

    #[test]
    fn headroom_is_split_by_target_once() {
        let g = Aggregate::new();
        let a = g.join(100.0);
        let b = g.join(300.0);
        // b reports 200 first (a has reported nothing): 800 unused, b gets 3/4.
        assert_eq!(b.share_available(Some(1000.0), 200.0), Some(200.0 + 0.75 * 800.0));
        // a sends 100: 1000 - 300 = 700 unused; a gets 1/4 of it.
        assert_eq!(a.share_available(Some(1000.0), 100.0), Some(100.0 + 0.25 * 700.0));
        // Together the shares add up to A, never to n * A.
        let sa = a.share_available(Some(1000.0), 100.0).unwrap();
        let sb = b.share_available(Some(1000.0), 200.0).unwrap();
        assert_eq!(sa + sb, 1000.0);
        // Overshooting the group's bandwidth leaves each its own rate only.
        assert_eq!(a.share_available(Some(250.0), 100.0), Some(100.0));
    }

    #[test]
    fn carry_is_pooled_and_leaving_members_stop_counting() {
        let g = Aggregate::new();
        let a = g.join(100.0);
        let b = g.join(100.0);
        assert_eq!(a.pool_carry(60.0), 30.0);
        // b is 20 ahead: the group is 40 behind, half of it each.
        assert_eq!(b.pool_carry(-20.0), 20.0);
        assert_eq!(g.members(), 2);
        drop(b);
        assert_eq!(g.members(), 1);
        assert_eq!(g.target_bytes_per_sec(), 100.0);
        assert_eq!(a.pool_carry(60.0), 60.0);
        assert_eq!(a.share_available(Some(500.0), 50.0), Some(500.0));
        // A newcomer takes the free seat, with nothing of the old member's.
        let c = g.join(300.0);
        assert_eq!(g.lock().len(), 2);
        assert_eq!(c.pool_carry(0.0), 0.75 * 60.0);
    }

    #[test]
    fn odd_numbers_do_not_poison_the_group() {
        let g = Aggregate::new();
        let a = g.join(100.0);
        let b = g.join(100.0);
        assert_eq!(a.share_available(Some(1000.0), f64::NAN), Some(500.0));
        assert_eq!(a.pool_carry(f64::INFINITY), 0.0);
        assert_eq!(b.pool_carry(10.0), 5.0);
    }
}
