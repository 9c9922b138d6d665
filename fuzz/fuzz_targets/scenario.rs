#![no_main]
//! Fuzz target `scenario`: see `tput_lab::fuzz::scenario`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| tput_lab::fuzz::scenario(data));
