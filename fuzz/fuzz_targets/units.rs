#![no_main]
//! Fuzz target `units`: see `tput_lab::fuzz::units`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| tput_lab::fuzz::units(data));
