#![no_main]
//! Fuzz target `server_datagrams`: see `tput_lab::fuzz::server_datagrams`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| tput_lab::fuzz::server_datagrams(data));
