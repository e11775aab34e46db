use super::*;

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn write_site(out: &Path, files: &[(&str, &str)]) {
    let staging = Staging::begin(out).unwrap();
    for (rel, text) in files {
        staging.write(rel, text.as_bytes()).unwrap();
    }
    staging.commit().unwrap().remove();
}

#[test]
fn a_path_written_twice_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    let staging = Staging::begin(&out).unwrap();
    staging.write("a/x.html", b"one").unwrap();
    let err = staging.write("a/x.html", b"two").unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
    staging.commit().unwrap().remove();
    assert_eq!(std::fs::read(out.join("a/x.html")).unwrap(), b"one");
}

#[test]
fn a_staging_dropped_before_its_commit_leaves_the_previous_output_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    write_site(&out, &[("index.html", "previous")]);
    let staging = Staging::begin(&out).unwrap();
    staging.write("index.html", b"half").unwrap();
    staging.write("deep/er/page.html", b"half").unwrap();
    drop(staging);
    assert_eq!(std::fs::read(out.join("index.html")).unwrap(), b"previous");
    assert_eq!(names(dir.path()), ["site"], "the staging directory is gone");
}

#[test]
fn a_target_that_is_a_file_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    std::fs::write(&out, "keep").unwrap();
    assert!(Staging::begin(&out).is_err());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep");
    assert_eq!(names(dir.path()), ["site"]);
}

#[test]
fn names_that_leave_the_staging_directory_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    let staging = Staging::begin(&out).unwrap();
    for rel in [
        "../escape.html",
        "/tmp/abs.html",
        "a/../../b.html",
        "",
        "./",
    ] {
        let err = staging.write(rel, b"x").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{rel:?}");
        assert!(staging.write_durable(rel, b"x").is_err(), "{rel:?}");
    }
    staging.commit().unwrap().remove();
    assert_eq!(names(dir.path()), ["site"]);
    assert!(!Path::new("/tmp/abs.html").exists());
}

#[test]
fn rewriting_links_unchanged_files_and_replaces_changed_ones() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    write_site(
        &out,
        &[
            ("a/same.html", "same"),
            ("a/changed.html", "before"),
            ("gone.html", "gone"),
        ],
    );
    let staging = Staging::begin(&out).unwrap();
    staging.write("a/same.html", b"same").unwrap();
    staging.write("a/changed.html", b"after!").unwrap();
    staging.write("b/new.html", b"new").unwrap();
    let replaced = staging.commit().unwrap();
    // The new output is in place before the previous one is removed.
    assert_eq!(
        std::fs::read_to_string(out.join("a/changed.html")).unwrap(),
        "after!"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let links = std::fs::metadata(out.join("a/same.html")).unwrap().nlink();
        assert_eq!(links, 2, "an unchanged file is a link to the previous one");
    }
    replaced.remove();
    assert_eq!(names(&out), ["a", "b"]);
    assert_eq!(names(&out.join("a")), ["changed.html", "same.html"]);
    assert_eq!(
        std::fs::read_to_string(out.join("a/same.html")).unwrap(),
        "same"
    );
    assert_eq!(names(dir.path()), ["site"], "nothing is left beside it");
}

#[test]
fn keeping_starts_from_the_previous_files_and_replaces_the_ones_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bundle");
    write_site(
        &out,
        &[("old-1.0.0.tar.gz", "v1"), ("SHA256SUMS", "sums v1")],
    );
    let staging = Staging::begin_keeping(&out).unwrap();
    staging.write_durable("new-1.1.0.tar.gz", b"v2").unwrap();
    staging.write("SHA256SUMS", b"sums v2").unwrap();
    // Until the commit, the published directory is the previous one, untouched.
    assert_eq!(std::fs::read(out.join("SHA256SUMS")).unwrap(), b"sums v1");
    assert!(!out.join("new-1.1.0.tar.gz").exists());
    staging.commit().unwrap().remove();
    assert_eq!(
        names(&out),
        ["SHA256SUMS", "new-1.1.0.tar.gz", "old-1.0.0.tar.gz"]
    );
    assert_eq!(std::fs::read(out.join("SHA256SUMS")).unwrap(), b"sums v2");
    assert_eq!(std::fs::read(out.join("old-1.0.0.tar.gz")).unwrap(), b"v1");
}

/// A process that died between the fallback swap's two renames left the previous
/// output at `.<name>.old-<pid>-<n>` and nothing at the target: the next writer puts it
/// back instead of deleting it.
#[cfg(target_os = "linux")]
#[test]
fn a_previous_output_stranded_by_a_dead_process_is_put_back() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    let dead = dead_pid();
    let stranded = dir.path().join(format!(".site.old-{dead}-0"));
    std::fs::create_dir(&stranded).unwrap();
    std::fs::write(stranded.join("index.html"), "previous").unwrap();
    let half = dir.path().join(format!(".site.tmp-{dead}-1"));
    std::fs::create_dir(&half).unwrap();
    std::fs::write(half.join("index.html"), "half").unwrap();

    let staging = Staging::begin(&out).unwrap();
    assert_eq!(
        std::fs::read_to_string(out.join("index.html")).unwrap(),
        "previous",
        "restored before the new staging starts"
    );
    drop(staging);
    assert_eq!(
        names(dir.path()),
        ["site"],
        "the half-written staging is gone"
    );
}

/// Another live process's staging directory is never touched.
#[cfg(target_os = "linux")]
#[test]
fn a_live_writers_staging_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let live = dir.path().join(format!(".site.tmp-{}-0", child.id()));
    std::fs::create_dir(&live).unwrap();
    drop(Staging::begin(&out).unwrap());
    assert!(live.exists());
    child.kill().unwrap();
    child.wait().unwrap();
    drop(Staging::begin(&out).unwrap());
    assert!(!live.exists(), "removed once its process is gone");
}

#[cfg(target_os = "linux")]
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[cfg(unix)]
#[test]
fn a_second_lock_on_a_directory_waits_for_the_first() {
    use std::sync::mpsc;
    let dir = tempfile::tempdir().unwrap();
    let first = DirLock::acquire(dir.path(), || panic!("nobody holds it yet")).unwrap();
    let (waited_tx, waited_rx) = mpsc::channel();
    let (got_tx, got_rx) = mpsc::channel();
    let path = dir.path().to_path_buf();
    let second = std::thread::spawn(move || {
        let lock = DirLock::acquire(&path, || waited_tx.send(()).unwrap()).unwrap();
        got_tx.send(()).unwrap();
        drop(lock);
    });
    waited_rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the second writer is told it waits");
    assert!(
        got_rx
            .recv_timeout(std::time::Duration::from_millis(300))
            .is_err(),
        "the second writer does not get the lock while the first holds it"
    );
    drop(first);
    got_rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the second writer gets it once the first lets go");
    second.join().unwrap();
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "no lock file is left behind"
    );
}
