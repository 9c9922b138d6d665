#![no_main]
//! Fuzz target `server_stream`: see `tput_lab::fuzz::server_stream`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| tput_lab::fuzz::server_stream(data));
