#!/usr/bin/env python3
"""errata snippet runner: runs a pack made by `cargo xtask snippets --pack DIR`.

Self-contained (Python 3.8+ standard library only) so that it works on a GPU machine
with no Rust toolchain and no network. It never judges outcomes: it records what
happened (exit status, signal, timeout, capped stdout/stderr, duration, machine facts)
in results.json; `cargo xtask snippets --ingest DIR` classifies them.

Snippet code is untrusted, so each item runs isolated as far as the OS allows:
- in a fresh directory (also its HOME and TMPDIR), removed afterwards whatever happened;
- with a minimal environment (PATH, locale, CUDA/NVIDIA/PyTorch settings, library and
  Python paths), never the runner's tokens or credentials;
- without network when `unshare` can give it an empty network namespace (probed once;
  results.json's env says whether it was in effect);
- in its own process group, killed whole at its timeout and after it exits, plus any
  process that left the group but still carries this run's token in its environment;
- with every file it writes, stdout and stderr included, limited to OUTPUT_LIMIT bytes
  (RLIMIT_FSIZE: the writer gets SIGXFSZ), no core files, and a CPU-time limit.

Before anything runs it checks the machine: the GPU, its driver, and the newest CUDA
that driver supports against the pack's CUDA (manifest `cuda_version`). A driver of an
older major version cannot run the binaries at all (they are skipped, `driver-too-old`);
an older minor version runs them under minor-version compatibility (the binaries carry
SASS for the pack's `arch`, so nothing is JIT-compiled), and results.json says so, so
that a refusal by the driver is not taken for the snippet's error on ingest.

Items run in parallel (--jobs, default: the CPU count); results.json is rewritten as
each one ends, so a run stopped half-way still returns what ran; with --deadline S no
item starts after S seconds (the rest are recorded as skipped, `deadline`).

usage: python3 run.py [--check] [--allow-no-gpu] [--jobs N] [--deadline S] [--only ID]...
                      [--out results.json]
"""
import binascii
import concurrent.futures
import ctypes
import glob
import json
import os
import platform
import resource
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = HERE  # where the items' paths point: the unpacked payload (set in main)
CAP = 64 * 1024  # bytes kept per stream: the head and the tail, where errors are
# Largest file a snippet may write, its stdout and stderr included: a snippet that
# prints forever is stopped by SIGXFSZ here instead of filling the disk.
OUTPUT_LIMIT = 16 * 1024 * 1024
# Variables a snippet may see from the runner's environment (besides those the runner
# sets): enough to find the interpreter, the libraries and the GPU, nothing else.
ENV_KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "LD_LIBRARY_PATH", "PYTHONPATH",
            "PYTHONHOME")
ENV_KEEP_PREFIXES = ("CUDA_", "NVIDIA_", "PYTORCH_")
# A kept prefix does not keep what looks like a credential (`NVIDIA_API_KEY`).
ENV_SECRET_WORDS = ("TOKEN", "KEY", "SECRET", "PASS", "CRED", "AUTH")


def sh(cmd, timeout=60):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        return p.returncode, p.stdout.decode("utf-8", "replace")
    except (OSError, subprocess.SubprocessError):
        return None, ""


def gpu_facts():
    if shutil.which("nvidia-smi") is None:
        return None
    rc, out = sh(["nvidia-smi", "--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"])
    if rc != 0 or not out.strip():
        return None
    parts = [p.strip() for p in out.strip().splitlines()[0].split(",")]
    if len(parts) != 3:
        return None
    return {"gpu_name": parts[0], "compute_capability": parts[1], "driver_version": parts[2]}


def torch_facts():
    code = "import json,torch;print(json.dumps([torch.__version__, torch.version.cuda, torch.cuda.is_available()]))"
    rc, out = sh([sys.executable, "-c", code], timeout=300)
    if rc != 0:
        return None
    try:
        version, cuda, available = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    return {"torch_version": version, "torch_cuda": cuda, "torch_cuda_available": available}


def driver_cuda():
    """The newest CUDA the driver supports, as "major.minor": cuDriverGetVersion from
    libcuda, else the "CUDA Version" nvidia-smi prints in its header."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        v = ctypes.c_int(0)
        if lib.cuDriverGetVersion(ctypes.byref(v)) == 0 and v.value > 0:
            return "%d.%d" % (v.value // 1000, (v.value % 1000) // 10)
    except (OSError, AttributeError):
        pass
    if shutil.which("nvidia-smi") is None:
        return None
    rc, out = sh(["nvidia-smi"])
    for line in out.splitlines():
        if "CUDA Version:" in line:
            v = line.split("CUDA Version:")[1].split()[0]
            if v.count(".") == 1 and all(p.isdigit() for p in v.split(".")):
                return v
    return None


def version_tuple(v):
    return tuple(int(p) for p in v.split("."))


def cuda_compat(pack_cuda, drv):
    """(verdict, sentence) on whether the driver can run the pack's binaries."""
    if not pack_cuda:
        return "unknown", "the pack does not say which CUDA its binaries need"
    if not drv:
        return "unknown", "the driver's CUDA version could not be read (no libcuda, no nvidia-smi)"
    need, have = version_tuple(pack_cuda), version_tuple(drv)
    if have >= need:
        return "ok", "the driver supports CUDA %s; the pack needs %s" % (drv, pack_cuda)
    if have[0] == need[0]:
        return ("minor-version-compatibility",
                "the pack's CUDA %s is newer than the driver's CUDA %s: its binaries run under "
                "minor-version compatibility (SASS, no PTX JIT); a call the driver does not "
                "support fails with cudaErrorCallRequiresNewerDriver, and that is the "
                "driver's, not the snippet's error" % (pack_cuda, drv))
    return ("driver-too-old",
            "the pack's CUDA %s is newer than the driver's CUDA %s, across a major version: "
            "its binaries cannot run here (cudaErrorInsufficientDriver), so they are skipped; "
            "update the driver or pack with a CUDA %d.x nvcc" % (pack_cuda, drv, have[0]))


def find_sanitizer():
    """compute-sanitizer: $ERRATA_COMPUTE_SANITIZER, the pack's own (--pack-sanitizer),
    the PATH, then where CUDA toolkits and NVIDIA's pip wheels put it."""
    packed = os.path.join(ROOT, "tools", "compute-sanitizer", "compute-sanitizer")
    candidates = [os.environ.get("ERRATA_COMPUTE_SANITIZER"), packed,
                  shutil.which("compute-sanitizer")]
    for pattern in ("/usr/local/cuda/compute-sanitizer/compute-sanitizer",
                    "/usr/local/cuda*/compute-sanitizer/compute-sanitizer",
                    "/usr/local/cuda*/bin/compute-sanitizer",
                    "/opt/nvidia/*/compute-sanitizer/compute-sanitizer"):
        candidates.extend(sorted(glob.glob(pattern)))
    for path in sys.path:
        candidates.extend(sorted(glob.glob(os.path.join(
            path, "nvidia", "cu*", "compute-sanitizer", "compute-sanitizer"))))
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def unpack(manifest):
    """Unpacks the payload next to run.py (once) and returns the directory items'
    paths are relative to. Members must stay inside it (checked here, since
    tarfile's own `filter` exists only from Python 3.12 and some 3.8-3.11 updates)."""
    name = manifest.get("payload")
    if not name:
        return HERE  # an older pack: loose files
    dest = os.path.join(HERE, "payload")
    stamp = os.path.join(dest, ".unpacked-" + manifest["pack_id"])
    if os.path.exists(stamp):
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    with tarfile.open(os.path.join(HERE, name), "r:gz") as tar:
        for m in tar.getmembers():
            target = os.path.realpath(os.path.join(dest, m.name))
            if not (m.isfile() or m.isdir()) or not target.startswith(os.path.realpath(dest) + os.sep):
                raise SystemExit("run.py: refusing payload member %r" % m.name)
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, filter="data")
        else:
            tar.extractall(dest)
    open(stamp, "w").close()
    return dest


def read_capped(path):
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        if size <= CAP:
            return f.read().decode("utf-8", "replace"), False
        head = f.read(CAP // 4)
        f.seek(size - (CAP - CAP // 4))
        tail = f.read()
    text = head.decode("utf-8", "replace") + "\n[… output truncated by errata …]\n" + tail.decode("utf-8", "replace")
    return text, True


def kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_marked(token):
    """Kills every process whose environment carries this run's token: those a snippet
    moved out of its process group (setsid, setpgid) are still its descendants."""
    marker = ("ERRATA_RUN_TOKEN=" + token).encode()
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return  # no /proc: the process group is all there is
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            with open("/proc/%d/environ" % pid, "rb") as f:
                environ = f.read().split(b"\0")
        except OSError:
            continue
        if marker in environ:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def snippet_env(work, token):
    env = {k: v for k, v in os.environ.items()
           if k in ENV_KEEP or (k.startswith(ENV_KEEP_PREFIXES)
                                and not any(w in k.upper() for w in ENV_SECRET_WORDS))}
    tmp = os.path.join(work, "tmp")
    home = os.path.join(work, "home")
    os.mkdir(tmp)
    os.mkdir(home)
    env.setdefault("PATH", os.defpath)
    env.update(HOME=home, TMPDIR=tmp, TMP=tmp, TEMP=tmp, PYTHONUNBUFFERED="1",
               PYTHONDONTWRITEBYTECODE="1", ERRATA_RUN_TOKEN=token)
    return env


# Run inside the new network namespace before the snippet: brings its own loopback up
# (a snippet may talk to itself on 127.0.0.1, e.g. torch.distributed with one process;
# that is not the host's loopback), then becomes the snippet's command.
LOOPBACK_UP = """
import fcntl, os, socket, struct, sys
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    flags = struct.unpack("16sH14x", fcntl.ioctl(s, 0x8913, struct.pack("16sH14x", b"lo", 0)))[1]
    fcntl.ioctl(s, 0x8914, struct.pack("16sH14x", b"lo", flags | 1))  # SIOCSIFFLAGS: IFF_UP
    s.close()
except OSError:
    pass
os.execvp(sys.argv[1], sys.argv[1:])
"""


def network_isolation():
    """The command prefix that runs a program in a network namespace of its own (only
    its own loopback), or None and why not. As root `unshare --net` suffices (no user
    namespace: device files stay as they are); otherwise an unprivileged user namespace
    maps the caller to root."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None, "unshare not found"
    why = ""
    for flags in (["--net"], ["--net", "--map-root-user"]):
        prefix = [unshare] + flags + [sys.executable, "-c", LOOPBACK_UP]
        # Only a namespace of its own counts: no interface but its loopback.
        probe = prefix + [sys.executable, "-c", "import socket;print(socket.if_nameindex())"]
        rc, out = sh(probe, timeout=30)
        if rc == 0 and out.strip() == "[(1, 'lo')]":
            return prefix, None
        why = "`unshare %s` failed (exit %s)" % (" ".join(flags), rc)
    return None, why


def limits(timeout_s):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (OUTPUT_LIMIT, OUTPUT_LIMIT))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        # CPU seconds are counted over all threads, so a limit near the timeout would
        # kill a busy multi-threaded snippet early: this one only bounds a process that
        # outlived the runner (the wall-clock timeout is the real limit).
        cpu = timeout_s * (os.cpu_count() or 1) + 30
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 10))
    return apply


def sanitizer_args(tool):
    """compute-sanitizer's arguments for an `expect=sanitizer:<tool>`: leaks are not a tool
    of their own but memcheck's --leak-check option."""
    if tool == "leakcheck":
        return ["--tool", "memcheck", "--leak-check", "full"]
    return ["--tool", tool]


def run_item(item, sanitizer, isolate):
    work = tempfile.mkdtemp(prefix="errata-run-")
    try:
        return run_in(work, item, sanitizer, isolate)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_in(work, item, sanitizer, isolate):
    out_path = os.path.join(work, ".stdout")
    err_path = os.path.join(work, ".stderr")
    target = os.path.join(ROOT, item["path"])
    cmd = [target] if item["kind"] == "exe" else [sys.executable, target]
    if item.get("sanitizer"):
        cmd = [sanitizer] + sanitizer_args(item["sanitizer"]) + cmd
    if isolate:
        cmd = isolate + cmd
    token = binascii.hexlify(os.urandom(16)).decode()
    env = snippet_env(work, token)
    start = time.monotonic()
    timed_out = False
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        # Own session = own process group: a timeout kills the snippet and its children.
        proc = subprocess.Popen(cmd, cwd=work, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                env=env, start_new_session=True, preexec_fn=limits(item["timeout_s"]))
        try:
            try:
                proc.wait(timeout=item["timeout_s"])
            except subprocess.TimeoutExpired:
                timed_out = True
                kill_group(proc.pid)
                proc.wait()
        finally:
            kill_group(proc.pid)  # leftovers a snippet forked into the background
            kill_marked(token)
    duration_ms = int((time.monotonic() - start) * 1000)
    limited = max(os.path.getsize(out_path), os.path.getsize(err_path)) >= OUTPUT_LIMIT
    stdout, t1 = read_capped(out_path)
    stderr, t2 = read_capped(err_path)
    rc = proc.returncode
    return {
        "id": item["id"], "status": "ran", "reason": None,
        "exit_code": rc if rc is not None and rc >= 0 else None,
        "signal": -rc if rc is not None and rc < 0 else None,
        "timed_out": timed_out, "duration_ms": duration_ms,
        "stdout": stdout, "stderr": stderr, "truncated": t1 or t2,
        "output_limited": limited,
    }


def option(argv, name, default=None):
    if name in argv[:-1]:
        return argv[argv.index(name) + 1]
    return default


def write_results(out_file, manifest, env, results):
    """Rewrites results.json whole (a temporary file renamed over it), sorted by id:
    a reader never sees half a file, and a run cut short leaves what ended."""
    tmp = out_file + ".partial"
    ordered = sorted(results, key=lambda r: r["id"])
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"version": 1, "pack": manifest["pack_id"], "env": env, "results": ordered},
                  f, indent=1)
    os.replace(tmp, out_file)


def main(argv):
    global ROOT
    allow_no_gpu = "--allow-no-gpu" in argv
    only = {argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--only"}
    out_file = os.path.abspath(option(argv, "--out", os.path.join(HERE, "results.json")))
    jobs = max(1, int(option(argv, "--jobs", os.cpu_count() or 1)))
    deadline = option(argv, "--deadline")
    deadline = time.monotonic() + float(deadline) if deadline else None
    with open(os.path.join(HERE, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    ROOT = unpack(manifest)
    gpu = gpu_facts()
    drv = driver_cuda() if gpu else None
    compat, compat_note = cuda_compat(manifest.get("cuda_version"), drv)
    sys.stderr.write("gpu: %s; driver %s, CUDA %s; pack: CUDA %s, %s\n" % (
        gpu["gpu_name"] if gpu else "none",
        gpu["driver_version"] if gpu else "-", drv or "?",
        manifest.get("cuda_version") or "?", manifest.get("arch") or "?"))
    if gpu:
        sys.stderr.write("%s: %s\n" % (compat, compat_note))
        if gpu["compute_capability"].replace(".", "") != (manifest.get("arch") or "sm_").split("_")[-1]:
            sys.stderr.write("warning: the binaries hold SASS for %s, this GPU is %s: the "
                             "driver JIT-compiles their PTX\n" % (manifest.get("arch"), gpu["compute_capability"]))
    needs_torch = any(i["needs_torch"] for i in manifest["items"])
    torch = torch_facts() if needs_torch else None
    sanitizer = find_sanitizer()
    env = {
        "gpu": gpu,
        "python_version": platform.python_version(),
        "torch": torch,
        "compute_sanitizer": sanitizer,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "driver_cuda": drv,
        "cuda_compat": compat if gpu else None,
        "cuda_compat_note": compat_note if gpu else None,
        "output_limit": OUTPUT_LIMIT,
    }
    if "--check" in argv:
        env["torch"] = torch_facts()
        json.dump(env, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return
    isolate, why = network_isolation()
    env.update(network_isolated=isolate is not None, network_note=why, jobs=jobs)
    if why:
        sys.stderr.write("warning: snippets run WITH network access: %s\n" % why)
    items = [i for i in manifest["items"] if not only or i["id"] in only]
    results = []
    lock = threading.Lock()
    done = [0]

    def finish(item, result):
        with lock:
            results.append(result)
            done[0] += 1
            sys.stderr.write("[%d/%d] %s %s:%d%s\n" % (
                done[0], len(items), result["status"], item["file"], item["line"],
                " (%s)" % result["reason"] if result.get("reason") else ""))
            sys.stderr.flush()
            write_results(out_file, manifest, env, results)

    def one(item):
        reason = None
        if gpu is None and (item["needs_gpu"] or not allow_no_gpu):
            reason = "no-gpu"
        elif item["kind"] == "exe" and compat == "driver-too-old":
            reason = "driver-too-old: " + compat_note
        elif item["needs_torch"] and torch is None:
            reason = "no-torch"
        elif item.get("sanitizer") and not sanitizer:
            reason = "no-compute-sanitizer"
        elif deadline is not None and time.monotonic() > deadline:
            reason = "deadline"
        if reason:
            return finish(item, {"id": item["id"], "status": "skipped", "reason": reason})
        try:
            result = run_item(item, sanitizer, isolate)
        except OSError as e:
            result = {"id": item["id"], "status": "error", "reason": str(e)}
        finish(item, result)

    write_results(out_file, manifest, env, results)
    # A `requires=whole-gpu` item exhausts device memory on purpose: beside others it
    # would make them fail (and their failures would not be theirs), so it runs alone,
    # after the pool has drained.
    alone = [i for i in items if i.get("whole_gpu")]
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for f in [pool.submit(one, i) for i in items if not i.get("whole_gpu")]:
            f.result()
    for item in alone:
        one(item)
    sys.stderr.write("results: %s\n" % out_file)


if __name__ == "__main__":
    main(sys.argv[1:])
