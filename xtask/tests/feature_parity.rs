//! `cargo xtask` builds xtask on its own, and cargo chooses each crate's features from
//! the packages one build selects: with fewer features than `cargo test --workspace`
//! turns on, every crate xtask shares with the tests was a different build, compiled
//! twice in each clean CI run (36 of xtask's 158 units, jsonschema and serde among them).
//! xtask/Cargo.toml names the missing features; this test fails when they drift.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Each package of `cargo tree <args>` with the features it is built with.
fn features(args: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .arg("tree")
        .args(args)
        .args(["--prefix", "none", "--format", "{p}|{f}"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut packages: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some((package, features)) = line.split_once('|') else {
            continue;
        };
        // "syn v2.0.119 (proc-macro)" and a repeated "… (*)" name the same package.
        let package = package
            .trim_end_matches(" (*)")
            .trim_end_matches(" (proc-macro)")
            .to_string();
        let features = features.trim_end_matches(" (*)");
        packages.entry(package).or_default().extend(
            features
                .split(',')
                .filter(|f| !f.is_empty())
                .map(str::to_string),
        );
    }
    packages
}

#[test]
fn feature_parity_with_the_workspace() {
    let xtask = features(&["-p", "xtask", "-e", "normal,build"]);
    let workspace = features(&["--workspace", "-e", "normal,build,dev"]);
    assert!(
        xtask.len() > 50,
        "only {} packages under xtask",
        xtask.len()
    );
    let drift: Vec<String> = xtask
        .iter()
        .filter_map(|(package, own)| {
            let all = workspace.get(package)?;
            (all != own).then(|| {
                format!(
                    "{package}: the workspace's tests add {:?}, xtask alone adds {:?}",
                    all.difference(own).collect::<Vec<_>>(),
                    own.difference(all).collect::<Vec<_>>()
                )
            })
        })
        .collect();
    assert!(
        drift.is_empty(),
        "xtask is built with other features than the workspace's tests; name them in \
         xtask/Cargo.toml's parity section:\n{}",
        drift.join("\n")
    );
}
