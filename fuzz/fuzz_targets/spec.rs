#![no_main]
//! Fuzz target `spec`: see `tput_cc::fuzz::spec`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| tput_cc::fuzz::spec(data));
