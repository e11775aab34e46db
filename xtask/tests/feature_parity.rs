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

/// The package's name in a `cargo tree` line ("serde v1.0.229" → "serde").
fn name(package: &str) -> &str {
    package.split(" v").next().unwrap_or(package)
}

/// `cargo xtask py-wheel` builds the release `errata` binary, then the Python extension
/// (a workspace of its own, crates/errata-py) in the same target directory. A crate both
/// use is compiled once only where both chose the same version and features: this fails
/// when crates/errata-py's Cargo.lock or its parity section drifts from the binary's.
#[test]
fn python_extension_shares_the_release_build() {
    let manifest = "../crates/errata-py/Cargo.toml";
    // What the compiled code links (proc macros and their own dependencies are resolved
    // apart, and `cargo tree` would merge the two sides).
    let binary = features(&["-p", "errata", "-e", "normal,no-proc-macro"]);
    let extension = features(&["--manifest-path", manifest, "-e", "normal,no-proc-macro"]);
    assert!(
        extension.len() > 30,
        "only {} packages under errata-py",
        extension.len()
    );
    let mut drift = Vec::new();
    for (package, own) in &extension {
        let same_name: Vec<&String> = binary.keys().filter(|p| name(p) == name(package)).collect();
        if same_name.is_empty() {
            continue; // pyo3 and what only it uses
        }
        match binary.get(package) {
            None => drift.push(format!(
                "{package}: the binary builds {same_name:?} (errata-py's Cargo.lock differs from \
                 the workspace's: copy the workspace's Cargo.lock over it and run `cargo tree \
                 --manifest-path crates/errata-py/Cargo.toml`)"
            )),
            Some(theirs) if theirs != own => drift.push(format!(
                "{package}: the binary adds {:?}, the extension adds {:?}",
                theirs.difference(own).collect::<Vec<_>>(),
                own.difference(theirs).collect::<Vec<_>>()
            )),
            Some(_) => {}
        }
    }
    // The other side: what only the proc macros use (syn, proc-macro2, …), compared
    // where it is host-only in both builds, so that `cargo tree`'s merged features are
    // the host's.
    let binary_all = features(&["-p", "errata", "-e", "normal,build"]);
    let extension_all = features(&["--manifest-path", manifest, "-e", "normal,build"]);
    let mut host_only = 0;
    for (package, own) in &extension_all {
        if extension.contains_key(package) || binary.contains_key(package) {
            continue;
        }
        let Some(theirs) = binary_all.get(package) else {
            continue;
        };
        host_only += 1;
        if theirs != own {
            drift.push(format!(
                "{package} (proc macros): the binary adds {:?}, the extension adds {:?}",
                theirs.difference(own).collect::<Vec<_>>(),
                own.difference(theirs).collect::<Vec<_>>()
            ));
        }
    }
    assert!(
        host_only >= 3,
        "only {host_only} packages of the proc macros compared"
    );
    assert!(
        drift.is_empty(),
        "the Python extension is built with other versions or features than the release \
         binary; align crates/errata-py (Cargo.lock, the parity section of Cargo.toml):\n{}",
        drift.join("\n")
    );
}
