#![no_main]
//! Fuzz target `frame`: see `tput_lab::fuzz::frame`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| tput_lab::fuzz::frame(data));
