//! The soak at toy size: honest clients are all verified while killed
//! clients, impostors, garbage and spoofed Initials come and go, and the
//! server keeps serving.

use std::time::Duration;

use tput_benches::soak::{Kind, Options, kind, run};

#[test]
fn a_small_soak_verifies_every_honest_client_and_refuses_every_impostor() {
    let o = Options {
        rounds: 1,
        clients: 12,
        client_gap: Duration::from_millis(50),
        bytes: 200_000,
        kill_after: Duration::from_millis(100),
        garbage: 500,
        spoofed_initials: 20,
        retry: true,
        timeout: Duration::from_secs(1),
        max_connections: 64,
    };
    // 12 clients: 4 killed, 1 wrong pin (i = 3), 1 without a certificate (i = 6).
    assert_eq!((0..12).filter(|&i| kind(i) == Kind::Killed).count(), 4);
    let r = run(&o, |_| {}).expect("the soak runs");
    let text = r.text(&o);
    let round = &r.rounds[0];
    assert_eq!(round.honest, 6, "{text}");
    assert_eq!(round.honest_verified, 6, "{text}");
    assert_eq!((round.wrong_pin, round.wrong_pin_refused), (1, 1), "{text}");
    assert_eq!((round.no_cert, round.no_cert_refused), (1, 1), "{text}");
    assert_eq!((round.garbage_sent, round.spoofed_sent), (500, 20), "{text}");
    assert!(r.server_failure.is_none(), "{text}");
    // The server finished the honest transfers (and ended the killed ones
    // with an error once they went silent).
    assert!(r.server_ok >= 6, "{text}");
    assert!(r.rss_peak_kib >= round.rss_after_kib, "{text}");
}
