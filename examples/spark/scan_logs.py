"""Scan a directory of logs for known GPU/CUDA errors with PySpark and errata.

    python3 scan_logs.py LOG_DIR --out matches.jsonl [--master local[4]] [--partitions N]

Each log is one task input; the tasks run `errata.scan` (the Python package, whose wheel
carries the knowledge base) inside `mapInPandas`. The bundle is loaded once per Python
worker (`errata.default_bundle()` keeps it, and Spark reuses its Python workers), not once
per file or batch. The output is one JSON object per match (`path`, `line`, `id`,
`text`), sorted by path, line and id: the same for any number of partitions or executors.

The logs must be readable by every executor at the same path: a local directory in local
mode, a shared file system (NFS, Lustre, a mounted bucket) on a cluster. For logs in an
object store, read them with `spark.sparkContext.binaryFiles` and call
`errata.default_bundle().match(text)` on each file's text instead of `scan(path)`.
"""

import argparse
import json
import os
import sys
import time

import pandas as pd
from pyspark.sql import SparkSession

SCHEMA = "path string, line long, id string, text string"


def scan_batches(batches):
    """mapInPandas: for each batch of log paths, every match in every log."""
    import errata  # on the executor

    bundle = errata.default_bundle()  # loaded once per Python worker, then kept
    for pdf in batches:
        rows = []
        for path in pdf["path"]:
            for m in bundle.scan(path):
                rows.append((path, m.line, m.id, m.text))
        yield pd.DataFrame(rows, columns=["path", "line", "id", "text"])


def log_files(root):
    out = []
    for dirpath, _, names in os.walk(root):
        for name in names:
            out.append(os.path.abspath(os.path.join(dirpath, name)))
    return sorted(out)


def session(master):
    """A local or cluster SparkSession set up for `scan` (Arrow on, no UI)."""
    # Local mode: the workers run this interpreter (where errata is installed). On a
    # cluster, PYSPARK_PYTHON names the executors' Python, which needs errata too.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    return (
        SparkSession.builder.master(master)
        .appName("errata-scan-logs")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )


def scan(spark, files, partitions=0):
    """Every match in `files` as (path, line, id, text) tuples, sorted by path, line and
    id, and the job's seconds."""
    cores = spark.sparkContext.defaultParallelism
    partitions = partitions or min(len(files), 4 * cores)
    # One partition per slice of the file list, made where the list is: no shuffle.
    paths = spark.createDataFrame(
        spark.sparkContext.parallelize([(f,) for f in files], partitions), "path string"
    )
    start = time.perf_counter()
    # Collected through Arrow (toPandas), not as Row objects: pickling a Row per match
    # took longer than scanning the logs. Sorted on the driver: orderBy would run the
    # scan twice (once to sample the range partitioning).
    found = paths.mapInPandas(scan_batches, SCHEMA).toPandas()
    rows = sorted(
        zip(found["path"].tolist(), found["line"].tolist(), found["id"].tolist(), found["text"].tolist())
    )
    return rows, time.perf_counter() - start


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("logs", help="a directory of log files (searched recursively)")
    ap.add_argument("--out", required=True, help="where to write the matches (JSON Lines)")
    ap.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    ap.add_argument("--partitions", type=int, default=0, help="tasks (default: one per file, at most 4 per core)")
    args = ap.parse_args(argv)

    files = log_files(args.logs)
    if not files:
        print(f"no files under {args.logs}", file=sys.stderr)
        return 2
    spark = session(args.master)
    try:
        cores = spark.sparkContext.defaultParallelism
        rows, seconds = scan(spark, files, args.partitions)
    finally:
        spark.stop()
    with open(args.out, "w", encoding="utf-8") as out:
        for path, line, id_, text in rows:
            out.write(json.dumps({"path": path, "line": line, "id": id_, "text": text}, ensure_ascii=False) + "\n")
    size = sum(os.path.getsize(f) for f in files)
    print(
        f"{len(rows)} matches in {len(files)} files ({size / 2**20:.1f} MiB) in {seconds:.2f} s "
        f"on {cores} cores: {size / 2**20 / seconds / cores:.1f} MiB/s per core",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
