#![no_main]
//! Fuzz target `request`: see `tput_lab::fuzz::request`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| tput_lab::fuzz::request(data));
