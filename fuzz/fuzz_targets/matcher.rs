//! libFuzzer entry point for [`errata_fuzz::matcher`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| errata_fuzz::matcher(data));
