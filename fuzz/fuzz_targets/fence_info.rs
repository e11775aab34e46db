//! libFuzzer entry point for [`errata_fuzz::fence_info`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| errata_fuzz::fence_info(data));
