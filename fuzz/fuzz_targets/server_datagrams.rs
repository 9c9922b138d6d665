#![no_main]
//! Fuzz target `server_datagrams`: see `tput_transport::fuzz::server_datagrams`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| tput_transport::fuzz::server_datagrams(data));
