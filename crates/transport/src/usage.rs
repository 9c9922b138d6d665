//! What this process uses: CPU time and peak memory, read from Linux's
//! `/proc` (proc(5)); every reader returns `None` where the file does not
//! exist (not Linux) or cannot be parsed. One set of readers for the whole
//! workspace: the live loops ([`crate::udp`]), `tput-lab`'s live runs and
//! the benchmarks.

use std::sync::OnceLock;

/// `AT_CLKTCK` in the auxiliary vector (getauxval(3)): the frequency of
/// `times(2)` and of `/proc`'s tick counts.
const AT_CLKTCK: u64 = 17;
/// Linux's user-space tick rate (`USER_HZ`) on every architecture that
/// has `/proc` bar alpha and ia64; used if the auxiliary vector says none.
const DEFAULT_USER_HZ: u64 = 100;

/// Clock ticks per second of the tick counts in `/proc/self/stat`: what
/// `sysconf(_SC_CLK_TCK)` returns, read from the `AT_CLKTCK` entry the kernel
/// puts in the process's auxiliary vector (`/proc/self/auxv`, pairs of
/// native-endian words), so without `unsafe` or a C call; 100 if absent.
pub fn clock_ticks_per_sec() -> u64 {
    static HZ: OnceLock<u64> = OnceLock::new();
    *HZ.get_or_init(|| auxv_entry(AT_CLKTCK).filter(|&hz| hz > 0).unwrap_or(DEFAULT_USER_HZ))
}

/// The value of entry `key` of this process's auxiliary vector.
fn auxv_entry(key: u64) -> Option<u64> {
    let auxv = std::fs::read("/proc/self/auxv").ok()?;
    const W: usize = std::mem::size_of::<usize>();
    auxv.chunks_exact(2 * W).find_map(|pair| {
        let word = |b: &[u8]| Some(usize::from_ne_bytes(b.try_into().ok()?) as u64);
        (word(&pair[..W])? == key).then(|| word(&pair[W..])).flatten()
    })
}

/// CPU time (user plus system) this process has used so far, seconds,
/// threads that have exited included: `/proc/self/stat` fields 14 and 15
/// (`utime`, `stime`), in ticks of [`clock_ticks_per_sec`] (10 ms at the
/// usual 100 Hz).
pub fn process_cpu_secs() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may hold spaces;
    // after it come field 3 (state) .. field 15.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / clock_ticks_per_sec() as f64)
}

/// CPU time the calling thread has used so far, seconds: the first field
/// of `/proc/thread-self/schedstat` (nanoseconds on the CPU).
pub fn thread_cpu_secs() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(text.split_whitespace().next()?.parse::<u64>().ok()? as f64 / 1e9)
}

/// This process's peak resident set size so far, KiB (`VmHWM` in
/// `/proc/self/status`).
pub fn peak_rss_kib() -> Option<u64> {
    status_kib("VmHWM:")
}

/// This process's resident set size now, KiB (`VmRSS` in `/proc/self/status`).
pub fn rss_kib() -> Option<u64> {
    status_kib("VmRSS:")
}

/// A `kB` line of `/proc/self/status`.
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line[field.len()..].split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tick_rate_is_what_the_kernel_says() {
        let hz = clock_ticks_per_sec();
        match auxv_entry(AT_CLKTCK) {
            Some(k) => assert_eq!(hz, k),
            None => assert_eq!(hz, DEFAULT_USER_HZ),
        }
        if std::path::Path::new("/proc/self/auxv").exists() {
            assert!(
                auxv_entry(AT_CLKTCK).is_some(),
                "Linux puts AT_CLKTCK in every auxiliary vector"
            );
        }
    }

    #[test]
    fn memory_readers_agree_with_each_other() {
        // The resident set first, the peak after: other test threads may
        // grow the process between the two reads, and the peak only rises.
        let now = rss_kib();
        let peak = peak_rss_kib();
        let (Some(peak), Some(now)) = (peak, now) else {
            assert!(!std::path::Path::new("/proc/self/status").exists());
            return;
        };
        assert!(now > 0 && peak >= now, "VmHWM {peak} KiB, VmRSS {now} KiB");
        // With 8 MiB more resident (written, so its pages are in), the
        // peak is at least the resident set that holds them.
        let more = vec![1u8; 8 << 20];
        let resident = rss_kib().unwrap();
        assert!(peak_rss_kib().unwrap() >= resident);
        std::hint::black_box(&more);
    }

    #[test]
    fn the_thread_clock_advances_with_work() {
        let Some(before) = thread_cpu_secs() else {
            assert!(!std::path::Path::new("/proc/thread-self/schedstat").exists());
            return;
        };
        let mut x = 1u64;
        for i in 0..20_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
        assert!(thread_cpu_secs().unwrap() > before);
    }
}
