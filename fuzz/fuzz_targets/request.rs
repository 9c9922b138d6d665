#![no_main]
//! Fuzz target `request`: see `tput_transport::fuzz::request`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| tput_transport::fuzz::request(data));
