//! libFuzzer entry point for [`errata_fuzz::article`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| errata_fuzz::article(data));
