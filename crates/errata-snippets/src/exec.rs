//! Running a tool over snippet text (`python3`'s `ast`, `shellcheck`, `nvcc`): in a
//! directory of its own, with a time limit, its output read up to a cap, and its whole
//! process group killed when it ends or times out. The tools never execute snippet code,
//! but they read it: a pathological snippet must not hang the verifier, fill its memory,
//! or leave files or processes behind.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a tool may run and how much of each output stream is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time before the tool's process group is killed.
    pub timeout: Duration,
    /// Bytes kept per stream; the rest is read and dropped.
    pub output_cap: usize,
}

impl Default for Limits {
    /// Five minutes (nvcc on a heavy CCCL snippet takes seconds) and 16 MiB.
    fn default() -> Limits {
        Limits {
            timeout: Duration::from_secs(300),
            output_cap: 16 << 20,
        }
    }
}

/// What a tool did.
#[derive(Debug)]
pub struct Ran {
    /// Its exit status (after a timeout, the kill's).
    pub status: ExitStatus,
    /// Standard output, at most [`Limits::output_cap`] bytes.
    pub stdout: Vec<u8>,
    /// Standard error, at most [`Limits::output_cap`] bytes.
    pub stderr: Vec<u8>,
    /// Killed at [`Limits::timeout`].
    pub timed_out: bool,
    /// Some output passed the cap and was dropped.
    pub truncated: bool,
}

/// Runs `cmd` with `stdin` as its input, in `dir` (a fresh temp directory, removed after,
/// when `None`), within `limits`. `name` names the tool in errors.
pub fn run(
    name: &str,
    cmd: &mut Command,
    stdin: Option<&[u8]>,
    dir: Option<&Path>,
    limits: Limits,
) -> Result<Ran, String> {
    let fresh = match dir {
        Some(_) => None,
        None => Some(
            tempfile::Builder::new()
                .prefix("errata-tool-")
                .tempdir()
                .map_err(|e| format!("cannot create a temp dir for {name}: {e}"))?,
        ),
    };
    let cwd = dir.or(fresh.as_ref().map(|d| d.path()));
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    group::own_group(cmd);
    let mut child = cmd.spawn().map_err(|e| format!("cannot run {name}: {e}"))?;
    let pid = child.id();
    // Input and both outputs on threads of their own: a tool that writes before it has
    // read all its input would otherwise block on a full pipe, and so would we.
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let input = input.to_vec();
        std::thread::spawn(move || {
            // A tool that exits without reading its input closes the pipe: not our error.
            let _ = pipe.write_all(&input);
        });
    }
    let (tx, rx) = mpsc::channel();
    for (which, pipe) in [
        (
            0,
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        ),
        (
            1,
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        ),
    ] {
        let tx = tx.clone();
        let cap = limits.output_cap;
        std::thread::spawn(move || {
            let _ = tx.send((which, pipe.map(|p| read_capped(p, cap))));
        });
    }
    drop(tx);

    let start = Instant::now();
    let mut timed_out = false;
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() >= limits.timeout => {
                timed_out = true;
                group::kill(pid);
                break child.wait().map_err(|e| format!("{name}: {e}"))?;
            }
            Ok(None) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            Err(e) => {
                group::kill(pid);
                return Err(format!("{name}: {e}"));
            }
        }
    };
    // What it left running in the background would keep the pipes open.
    group::kill(pid);
    let mut streams = [(Vec::new(), false), (Vec::new(), false)];
    for _ in 0..2 {
        // Only a process that left the group can still hold a pipe open: stop waiting.
        match rx.recv_timeout(Duration::from_secs(5)) {
            Ok((which, Some(got))) => streams[which] = got,
            Ok((_, None)) => {}
            Err(_) => return Err(format!("{name}: its output stayed open after it exited")),
        }
    }
    let [(stdout, t1), (stderr, t2)] = streams;
    Ok(Ran {
        status,
        stdout,
        stderr,
        timed_out,
        truncated: t1 || t2,
    })
}

/// Reads everything, keeping the first `cap` bytes; true when some were dropped.
fn read_capped(mut r: impl Read, cap: usize) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    let mut dropped = false;
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
                dropped |= n > room;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    (kept, dropped)
}

#[cfg(unix)]
mod group {
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    /// The child leads a process group of its own, so that everything it starts can be
    /// killed with it.
    pub fn own_group(cmd: &mut Command) {
        cmd.process_group(0);
    }

    pub fn kill(pid: u32) {
        if let Ok(pgid) = libc::pid_t::try_from(pid) {
            // SAFETY: killpg has no memory effects. The group is the child's own (its
            // pid is its pgid); a group id is not reused while any member lives, and
            // once the group is empty the call fails with ESRCH.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}

#[cfg(not(unix))]
mod group {
    use std::process::Command;

    pub fn own_group(_: &mut Command) {}

    pub fn kill(_: u32) {}
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    /// Whether `pid` is still running a second after it was killed: SIGKILL is
    /// delivered asynchronously, so a loaded machine can show the process for a moment
    /// after `killpg` returned.
    fn alive(pid: &str) -> bool {
        let running = || {
            std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
                .is_ok_and(|s| !s.contains(") Z "))
        };
        let deadline = Instant::now() + Duration::from_secs(1);
        while running() {
            if Instant::now() > deadline {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let marker = tempfile::NamedTempFile::new().expect("tmp");
        let limits = Limits {
            timeout: Duration::from_millis(300),
            ..Limits::default()
        };
        let script = format!("sleep 60 & echo $! > {}; sleep 60", marker.path().display());
        let start = Instant::now();
        let ran = run("sh", &mut sh(&script), None, None, limits).expect("runs");
        assert!(ran.timed_out);
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{:?}",
            start.elapsed()
        );
        let pid = std::fs::read_to_string(marker.path()).expect("pid");
        assert!(!alive(&pid), "background sleep {pid} survived the timeout");
    }

    #[test]
    fn background_children_are_killed_after_a_normal_exit() {
        let marker = tempfile::NamedTempFile::new().expect("tmp");
        let script = format!(
            "sleep 60 >/dev/null 2>&1 & echo $! > {}; echo done",
            marker.path().display()
        );
        let ran = run("sh", &mut sh(&script), None, None, Limits::default()).expect("runs");
        assert!(ran.status.success() && !ran.timed_out);
        assert_eq!(ran.stdout, b"done\n");
        let pid = std::fs::read_to_string(marker.path()).expect("pid");
        assert!(!alive(&pid), "background sleep {pid} survived");
    }

    #[test]
    fn output_is_capped_while_it_is_read() {
        let limits = Limits {
            output_cap: 1000,
            ..Limits::default()
        };
        // 64 MiB through the pipe: kept to 1000 bytes, the rest drained (the tool is not
        // blocked on a full pipe).
        let ran = run(
            "sh",
            &mut sh("head -c 67108864 /dev/zero; echo err >&2"),
            None,
            None,
            limits,
        )
        .expect("runs");
        assert!(ran.status.success());
        assert_eq!(ran.stdout.len(), 1000);
        assert_eq!(ran.stderr, b"err\n");
        assert!(ran.truncated);
    }

    #[test]
    fn runs_in_a_fresh_directory_that_is_removed_after() {
        let input = b"hello".repeat(100_000);
        let ran = run(
            "sh",
            &mut sh("pwd; ls -A | wc -l; cat > f; wc -c < f"),
            Some(&input),
            None,
            Limits::default(),
        )
        .expect("runs");
        let out = String::from_utf8_lossy(&ran.stdout).into_owned();
        let mut lines = out.lines();
        let dir = lines.next().expect("pwd");
        assert!(dir.contains("errata-tool-"), "{out}");
        assert_eq!(lines.next(), Some("0"), "not empty: {out}");
        assert_eq!(lines.next(), Some("500000"));
        assert!(!Path::new(dir).exists(), "{dir} left behind");
    }
}
