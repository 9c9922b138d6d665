#![no_main]
//! Fuzz target `server_stream`: see `tput_transport::fuzz::server_stream`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| tput_transport::fuzz::server_stream(data));
