#!/usr/bin/env python3
"""errata snippet runner: runs a pack made by `cargo xtask snippets --pack DIR`.

Self-contained (Python 3.8+ standard library only) so that it works on a GPU machine
with no Rust toolchain and no network. It never judges outcomes: it records what
happened (exit status, signal, timeout, capped stdout/stderr, duration, machine facts)
in results.json; `cargo xtask snippets --ingest DIR` classifies them.

usage: python3 run.py [--allow-no-gpu] [--only ID]... [--out results.json]
"""
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CAP = 64 * 1024  # bytes kept per stream: the head and the tail, where errors are


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


def run_item(item, sanitizer):
    work = tempfile.mkdtemp(prefix="errata-run-")
    out_path = os.path.join(work, ".stdout")
    err_path = os.path.join(work, ".stderr")
    target = os.path.join(HERE, item["path"])
    cmd = [target] if item["kind"] == "exe" else [sys.executable, target]
    if item.get("sanitizer"):
        cmd = [sanitizer, "--tool", item["sanitizer"]] + cmd
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
    start = time.monotonic()
    timed_out = False
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        # Own session = own process group: a timeout kills the snippet and its children.
        proc = subprocess.Popen(cmd, cwd=work, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                env=env, start_new_session=True)
        try:
            proc.wait(timeout=item["timeout_s"])
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_group(proc.pid)
            proc.wait()
        kill_group(proc.pid)  # leftovers a snippet forked into the background
    duration_ms = int((time.monotonic() - start) * 1000)
    stdout, t1 = read_capped(out_path)
    stderr, t2 = read_capped(err_path)
    shutil.rmtree(work, ignore_errors=True)
    rc = proc.returncode
    return {
        "id": item["id"], "status": "ran", "reason": None,
        "exit_code": rc if rc is not None and rc >= 0 else None,
        "signal": -rc if rc is not None and rc < 0 else None,
        "timed_out": timed_out, "duration_ms": duration_ms,
        "stdout": stdout, "stderr": stderr, "truncated": t1 or t2,
    }


def main(argv):
    allow_no_gpu = "--allow-no-gpu" in argv
    only = {argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--only"}
    out_file = os.path.join(HERE, "results.json")
    if "--out" in argv[:-1]:
        out_file = argv[argv.index("--out") + 1]
    with open(os.path.join(HERE, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    gpu = gpu_facts()
    needs_torch = any(i["needs_torch"] for i in manifest["items"])
    torch = torch_facts() if needs_torch else None
    packed = os.path.join(HERE, "tools", "compute-sanitizer", "compute-sanitizer")
    sanitizer = (os.environ.get("ERRATA_COMPUTE_SANITIZER")
                 or (packed if os.access(packed, os.X_OK) else None)
                 or shutil.which("compute-sanitizer"))
    env = {
        "gpu": gpu,
        "python_version": platform.python_version(),
        "torch": torch,
        "compute_sanitizer": sanitizer,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
    }
    items = [i for i in manifest["items"] if not only or i["id"] in only]
    results = []
    for n, item in enumerate(items, 1):
        sys.stderr.write("[%d/%d] %s:%d\n" % (n, len(items), item["file"], item["line"]))
        sys.stderr.flush()
        reason = None
        if gpu is None and (item["needs_gpu"] or not allow_no_gpu):
            reason = "no-gpu"
        elif item["needs_torch"] and torch is None:
            reason = "no-torch"
        elif item.get("sanitizer") and not sanitizer:
            reason = "no-compute-sanitizer"
        if reason:
            results.append({"id": item["id"], "status": "skipped", "reason": reason})
            continue
        try:
            results.append(run_item(item, sanitizer))
        except OSError as e:
            results.append({"id": item["id"], "status": "error", "reason": str(e)})
    with open(out_file, "w", encoding="utf-8") as f:
        json.dump({"version": 1, "pack": manifest["pack_id"], "env": env, "results": results}, f, indent=1)
    sys.stderr.write("results: %s\n" % out_file)


if __name__ == "__main__":
    main(sys.argv[1:])
