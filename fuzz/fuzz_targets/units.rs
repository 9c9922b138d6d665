#![no_main]
//! Fuzz target `units`: see `tput_cc::fuzz::units`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| tput_cc::fuzz::units(data));
