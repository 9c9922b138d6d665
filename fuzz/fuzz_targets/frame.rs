#![no_main]
//! Fuzz target `frame`: see `tput_transport::fuzz::frame`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| tput_transport::fuzz::frame(data));
