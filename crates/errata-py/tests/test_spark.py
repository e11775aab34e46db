"""examples/spark/scan_logs.py in Spark's local mode: the errata package inside
mapInArrow finds exactly what `errata match` finds in the same files."""

import json
import os
import subprocess
import sys

import pytest

ERRATA_BIN = os.environ.get("ERRATA_BIN")
REPO = os.path.abspath(os.environ.get("ERRATA_REPO", os.path.join(os.path.dirname(__file__), "..", "..", "..")))

try:
    import pyspark  # noqa: F401

    HAVE_SPARK = True
except ImportError:
    HAVE_SPARK = False


def job_log_lines():
    """The lines of the whole-job fixture log (errors and noise)."""
    path = os.path.join(REPO, "tests", "fixtures", "logs", "ddp-training-incident.tsv")
    with open(path, encoding="utf-8") as f:
        return [row.split("\t", 1)[1] for row in f.read().splitlines()]


@pytest.mark.skipif(
    not HAVE_SPARK and os.environ.get("ERRATA_SKIP_SPARK") == "1",
    reason="ERRATA_SKIP_SPARK=1 and no pyspark",
)
def test_spark_local_mode_finds_what_the_cli_finds(tmp_path):
    assert HAVE_SPARK, "pyspark is required (pip install -r .ci/requirements-py-tests.txt), or set ERRATA_SKIP_SPARK=1"
    assert ERRATA_BIN, "ERRATA_BIN must name the errata binary"
    lines = job_log_lines()
    logs = tmp_path / "logs"
    (logs / "node02").mkdir(parents=True)
    # Nine logs of different sizes: rotations of the job log with noise in between.
    for i in range(9):
        part = lines[i * 7 :] + ["epoch %d step %d loss 1.%03d" % (i, s, s) for s in range(200 * i)] + lines[: i * 7]
        where = logs / "node02" if i % 3 == 0 else logs
        (where / f"rank{i}.log").write_text("\n".join(part) + "\n", encoding="utf-8")
    script = os.path.join(REPO, "examples", "spark", "scan_logs.py")

    def spark_job(*args):
        out = tmp_path / "matches.jsonl"
        r = subprocess.run(
            [sys.executable, script, str(logs), "--out", str(out), "--master", "local[2]", *args],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert r.returncode == 0, r.stderr[-4000:]
        assert "MiB/s per core" in r.stderr
        return [json.loads(l) for l in out.read_text(encoding="utf-8").splitlines()]

    spark = spark_job()
    # Five tasks for nine files of different sizes: other shares, the same output.
    assert spark_job("--partitions", "5") == spark

    cli = []
    for path in sorted(str(p) for p in logs.rglob("*.log")):
        m = subprocess.run(
            [ERRATA_BIN, "match", path, "--format", "json"], cwd=REPO, capture_output=True, text=True
        )
        assert m.returncode in (0, 1), m.stderr
        for row in m.stdout.splitlines():
            j = json.loads(row)
            cli.append({"path": os.path.abspath(path), "line": j["line"], "id": j["id"], "text": j["text"]})
    cli.sort(key=lambda d: (d["path"], d["line"], d["id"]))
    assert len(spark) > 9 * 20
    assert spark == cli


@pytest.mark.skipif(not HAVE_SPARK, reason="the example imports pyspark")
def test_shares_hold_every_file_once_in_about_equal_bytes(tmp_path):
    sys.path.insert(0, os.path.join(REPO, "examples", "spark"))
    try:
        import scan_logs
    finally:
        sys.path.pop(0)
    sizes = [900, 10, 500, 400, 300, 300, 200, 100, 50]
    files = []
    for i, size in enumerate(sizes):
        path = tmp_path / f"rank{i}.log"
        path.write_bytes(b"x" * size)
        files.append(str(path))
    shares = scan_logs.shares_of(files, 3)
    assert sorted(f for share in shares for f in share) == sorted(files)
    loads = [sum(os.path.getsize(f) for f in share) for share in shares]
    # 2,760 bytes in three shares, largest first to the lightest share: 900+50 |
    # 500+300+100+10 | 400+300+200 (the three-way tie at 900 gives the 50 to the first).
    assert sorted(loads) == [900, 910, 950], loads
    assert scan_logs.shares_of(files, 3) == shares
    assert scan_logs.shares_of(list(reversed(files)), 3) == shares
