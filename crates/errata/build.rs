//! Packs the repository's `data/` into the binary, so that `errata match`, `decode` and
//! `mcp` answer in any directory: a deterministic tar.gz of every file under `data/`
//! (sorted paths, zero times and owners), with its entry count and digest for
//! `errata --version`. A data directory with errors is packed as it is: `check` must
//! still build to report them, and the runtime checks what it loads.

use std::io::Write;
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in read.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.is_file() {
            out.push(path);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let data = manifest.join("../../data");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    println!("cargo:rerun-if-changed={}", data.display());

    let mut paths = Vec::new();
    files(&data, &mut paths);
    paths.sort();
    let mut entries = 0usize;
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let mut tar = tar::Builder::new(gz);
    tar.mode(tar::HeaderMode::Deterministic);
    for path in &paths {
        let Ok(rel) = path.strip_prefix(&data) else {
            continue;
        };
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let name: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        if name.first().map(String::as_str) == Some("signatures") && name.len() == 3 {
            entries += 1;
        }
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        tar.append_data(&mut header, name.join("/"), bytes.as_slice())
            .expect("tar in memory");
    }
    let packed = tar
        .into_inner()
        .and_then(|gz| gz.finish())
        .expect("gzip in memory");
    let digest: String = {
        use sha2::Digest;
        sha2::Sha256::digest(&packed)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    std::fs::File::create(out.join("kb-data.tar.gz"))
        .and_then(|mut f| f.write_all(&packed))
        .expect("write OUT_DIR/kb-data.tar.gz");
    println!("cargo:rustc-env=ERRATA_KB_ENTRIES={entries}");
    println!("cargo:rustc-env=ERRATA_KB_DIGEST={}", &digest[..12]);
}
