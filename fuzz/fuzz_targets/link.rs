#![no_main]
//! Fuzz target `link`: see `tput_lab::fuzz::link`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| tput_lab::fuzz::link(data));
