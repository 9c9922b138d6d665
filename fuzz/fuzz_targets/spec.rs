#![no_main]
//! Fuzz target `spec`: see `tput_lab::fuzz::spec`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| tput_lab::fuzz::spec(data));
