"""Scan a directory of logs for known GPU/CUDA errors with PySpark and errata.

    python3 scan_logs.py LOG_DIR --out matches.jsonl [--master local[4]] [--partitions N]

The files are dealt into one share per core of about equal bytes, and each task runs
`errata.scan` (the Python package, whose wheel carries the knowledge base) on each file of
its share inside `mapInArrow`. The bundle is loaded once per Python worker
(`errata.default_bundle()` keeps it, and Spark reuses its Python workers), not once per
file or batch. Each task returns one row per file, its matches as an Arrow IPC stream,
which the driver unpacks into one table. The output is one JSON object per match (`path`,
`line`, `id`, `text`), sorted by path, line and id: the same for any number of partitions
or executors.

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

import pyarrow as pa
from pyspark.sql import SparkSession

# What a task returns: one row per log file, its matches as one Arrow IPC stream. Spark
# converts every row of a mapInArrow result into its own row format and back again for
# toArrow, and a row per match (80,000 in 1 GiB of the bench's logs) cost it about 40 ms
# of a 0.5 s job on two cores; a row per file costs nothing, and pyarrow reads the
# streams back on the driver without a copy. `scan` returns the table itself: building
# Python tuples of 80,000 matches took the driver another 35 ms.
SCHEMA = "path string, matches binary"
ARROW_SCHEMA = pa.schema([("path", pa.string()), ("matches", pa.binary())])
MATCHES_SCHEMA = pa.schema([("line", pa.int64()), ("id", pa.string()), ("text", pa.string())])
COLUMNS = ("path", "line", "id", "text")


def scan_shares(shares):
    """mapInArrow over batches of indices into `shares` (lists of log paths): one row per
    log, its path and its matches (`MATCHES_SCHEMA`, sorted by line, id and text: on the
    executors, in parallel) as an Arrow IPC stream."""

    def scan_batches(batches):
        import errata  # on the executor

        bundle = errata.default_bundle()  # loaded once per Python worker, then kept
        for batch in batches:
            for share in batch.column(0).to_pylist():
                # One record batch per file: a task holds one file's matches at a time.
                for path in shares[share]:
                    found = bundle.scan(path)
                    matches = pa.RecordBatch.from_arrays(
                        [
                            pa.array([m.line for m in found], pa.int64()),
                            pa.array([m.id for m in found], pa.string()),
                            pa.array([m.text for m in found], pa.string()),
                        ],
                        schema=MATCHES_SCHEMA,
                    ).sort_by([(name, "ascending") for name in COLUMNS[1:]])
                    sink = pa.BufferOutputStream()
                    with pa.ipc.new_stream(sink, MATCHES_SCHEMA) as stream:
                        stream.write_batch(matches)
                    yield pa.RecordBatch.from_arrays(
                        [pa.array([path], pa.string()), pa.array([sink.getvalue().to_pybytes()], pa.binary())],
                        schema=ARROW_SCHEMA,
                    )

    return scan_batches


def unpack(found):
    """The matches in `scan_shares`' rows (`found`, a pyarrow Table) as one table of
    `COLUMNS`, sorted by path, line, id and text: each file's matches come sorted, so the
    files are put in order by path (a UTF-8 string sorts by its bytes, which is the order
    of its code points, as Python sorts it)."""
    tables = [MATCHES_SCHEMA.insert(0, pa.field("path", pa.string())).empty_table()]
    found = found.sort_by([("path", "ascending")])
    for path, blob in zip(found.column("path").to_pylist(), found.column("matches")):
        matches = pa.ipc.open_stream(blob.as_buffer()).read_all()
        tables.append(matches.add_column(0, "path", pa.array([path] * matches.num_rows, pa.string())))
    return pa.concat_tables(tables)


def shares_of(files, tasks):
    """`files` dealt into `tasks` lists of about equal bytes: the largest file first, each
    to the list with the fewest bytes so far (ties by position, so the same files always
    make the same lists)."""
    shares = [[] for _ in range(tasks)]
    load = [0] * tasks
    for size, path in sorted(((os.path.getsize(f), f) for f in files), key=lambda t: (-t[0], t[1])):
        k = min(range(tasks), key=lambda i: (load[i], i))
        shares[k].append(path)
        load[k] += size
    return shares


def log_files(root):
    out = []
    for dirpath, _, names in os.walk(root):
        for name in names:
            out.append(os.path.abspath(os.path.join(dirpath, name)))
    return sorted(out)


def session(master):
    """A local or cluster SparkSession set up for `scan` (no UI)."""
    # Local mode: the workers run this interpreter (where errata is installed). On a
    # cluster, PYSPARK_PYTHON names the executors' Python, which needs errata too.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    return (
        SparkSession.builder.master(master)
        .appName("errata-scan-logs")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )


def scan(spark, files, partitions=0):
    """Every match in `files` as a pyarrow Table of `COLUMNS` (path, line, id, text),
    sorted by them, and the job's seconds."""
    if not files:
        return unpack(ARROW_SCHEMA.empty_table()), 0.0
    cores = spark.sparkContext.defaultParallelism
    # One task per core by default, each with the same bytes to scan: on two cores a task
    # costs about a tenth of a second of Spark's own time (measured between two tasks on
    # the same Python worker), more than scanning 64 MiB, and `scan` spreads one large
    # file over the worker's cores by itself.
    tasks = min(len(files), partitions or cores)
    shares = shares_of(files, tasks)
    start = time.perf_counter()
    # The tasks' input is the range of share numbers (the shares travel with the
    # function): a source the JVM makes itself, where a DataFrame of paths built from
    # Python rows costs a Python stage of its own. Arrow both ways (mapInArrow, toArrow),
    # with no pandas between. Sorted by Arrow, each file on its executor and the files on
    # the driver: orderBy would run the scan twice (once to sample the range partitioning).
    found = spark.range(0, tasks, 1, tasks).mapInArrow(scan_shares(shares), SCHEMA).toArrow()
    return unpack(found), time.perf_counter() - start


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("logs", help="a directory of log files (searched recursively)")
    ap.add_argument("--out", required=True, help="where to write the matches (JSON Lines)")
    ap.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    ap.add_argument("--partitions", type=int, default=0, help="tasks (default: one per core, at most one per file)")
    args = ap.parse_args(argv)

    files = log_files(args.logs)
    if not files:
        print(f"no files under {args.logs}", file=sys.stderr)
        return 2
    spark = session(args.master)
    try:
        cores = spark.sparkContext.defaultParallelism
        found, seconds = scan(spark, files, args.partitions)
    finally:
        spark.stop()
    rows = zip(*(found.column(name).to_pylist() for name in COLUMNS))
    with open(args.out, "w", encoding="utf-8") as out:
        for path, line, id_, text in rows:
            out.write(json.dumps({"path": path, "line": line, "id": id_, "text": text}, ensure_ascii=False) + "\n")
    size = sum(os.path.getsize(f) for f in files)
    print(
        f"{found.num_rows} matches in {len(files)} files ({size / 2**20:.1f} MiB) in {seconds:.2f} s "
        f"on {cores} cores: {size / 2**20 / seconds / cores:.1f} MiB/s per core",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
