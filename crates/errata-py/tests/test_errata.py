"""The installed `errata` package (a wheel from `cargo xtask py-wheel`, installed in a
clean virtual environment by .ci/run), on the knowledge base it embeds and on real
bundles written by the `errata` binary (ERRATA_BIN)."""

import io
import json
import os
import subprocess
import sys
import textwrap

import pytest

import errata

ERRATA_BIN = os.environ.get("ERRATA_BIN")
REPO = os.environ.get("ERRATA_REPO", os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def test_the_embedded_knowledge_base_matches_offline():
    found = errata.match("step 10\nRuntimeError: CUDA error: misaligned address\n")
    assert [m.id for m in found] == ["cuda/misaligned-address"]
    m = found[0]
    assert (m.line, m.text) == (2, "misaligned address")
    assert m.signature == "CUDA error: misaligned address"
    assert "aligned" in m.root_cause
    # Its only former dead end (a smaller batch) turned out to be a stopgap that works, so
    # the entry has counted workarounds and no dead end.
    assert len(m.workarounds) >= 2 and m.dead_ends == []
    # Every kind of basis comes through, each shown as it must be: across a few common
    # errors' advice there are rates counted from reports and from a GPU run, and
    # estimates (the knowledge base holds estimates until reports are counted).
    log = "\n".join(
        [
            "RuntimeError: CUDA error: misaligned address",
            "torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
            "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:111: operator(): block: [0,0,0], thread: [0,0,0] "
            'Assertion `-sizes[i] <= index && index < sizes[i] && "index out of bounds"` failed.',
        ]
    )
    steps = [s for f in errata.match(log) for s in f.workarounds + f.dead_ends]
    assert {s.basis for s in steps} >= {"reports", "runs", "estimate"}
    # A rate is a number only when it was counted; an estimate comes as words and never
    # as a share.
    for step in steps:
        assert step.basis in {"reports", "runs", "outcomes", "estimate"}
        rate = step.success_rate if hasattr(step, "success_rate") else step.fail_rate
        if step.basis == "estimate":
            assert rate is None and "estimate" in step.evidence and "%" not in step.evidence
        else:
            assert 0 <= rate <= 1 and " of " in step.evidence
    assert all(w.sources for w in m.workarounds)
    assert m.sources and all(s.startswith("https://") for s in m.sources)
    assert m.verification in {"ai_generated", "community", "human_reviewed", "reproduced", "official"}
    assert errata.match("all good, loss 0.31") == []
    assert len(errata.default_bundle()) >= 200


def test_chinese_advice():
    m = errata.match("CUDA error: an illegal memory access was encountered", lang="zh")[0]
    assert m.id == "cuda/illegal-memory-access"
    assert "内存" in m.root_cause and "非法" in m.signature
    with pytest.raises(ValueError):
        errata.match("x", lang="fr")


def test_entry_and_search():
    e = errata.entry("cuda/out-of-memory")
    assert e.id == "cuda/out-of-memory"
    assert json.loads(e.json)["error_code"] == "cudaErrorMemoryAllocation (2)"
    assert errata.entry("cuda/no-such-entry") is None
    hits = errata.search("misaligned address", limit=3)
    assert hits[0].id == "cuda/misaligned-address" and hits[0].kind == "entry"
    assert len(hits) <= 3
    assert any(h.kind == "article" for h in errata.search("sticky errors restart", limit=20))
    zh = errata.search("非法内存访问", lang="zh", limit=50)
    assert "cuda/illegal-memory-access" in [h.id for h in zh]
    # Query syntax in pasted text is text.
    errata.search('"NEAR( * OR')


def test_scan_a_path_and_a_file_object(tmp_path):
    log = tmp_path / "train.log"
    lines = ["epoch 1 loss 2.3"] * 5000 + ["RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`"]
    log.write_text("\n".join(lines) + "\n")
    by_path = errata.scan(str(log))
    assert [(m.id, m.line) for m in by_path] == [("cublas/execution-failed", 5001)]
    assert [m.id for m in errata.scan(log)] == ["cublas/execution-failed"]  # os.PathLike
    with open(log, "rb") as f:
        assert [(m.id, m.line) for m in errata.scan(f)] == [("cublas/execution-failed", 5001)]
    assert [m.id for m in errata.scan(io.BytesIO(log.read_bytes()))] == ["cublas/execution-failed"]
    with pytest.raises(OSError):
        errata.scan(str(tmp_path / "missing.log"))


def test_repeated_matches_in_a_scan_keep_their_own_place_and_the_same_advice(tmp_path):
    # A scan converts an entry's advice once and shares it between that entry's matches.
    oom = "RuntimeError: CUDA error: out of memory"
    log = tmp_path / "train.log"
    log.write_text(f"step 1\n{oom}\nstep 2\n  {oom}\n{oom} (again)\n")
    found = errata.scan(str(log), lang="zh")
    assert [(m.id, m.line, m.column) for m in found] == [
        ("cuda/out-of-memory", 2, 15), ("cuda/out-of-memory", 4, 17), ("cuda/out-of-memory", 5, 15)]
    alone = errata.match(oom, lang="zh")[0]
    for m in found:
        assert m.text == alone.text
        assert (m.signature, m.root_cause, m.dead_ends, m.workarounds, m.sources, m.verification) == (
            alone.signature, alone.root_cause, alone.dead_ends, alone.workarounds, alone.sources,
            alone.verification)
        assert {**m.to_dict(), "line": 0, "column": 0} == {**alone.to_dict(), "line": 0, "column": 0}


@pytest.mark.skipif(not ERRATA_BIN, reason="ERRATA_BIN (the errata binary) not set")
def test_bundle_open_loads_a_newer_bundle_verified(tmp_path):
    out = tmp_path / "bundle"
    subprocess.run([ERRATA_BIN, "bundle", "--out", str(out)], cwd=REPO, check=True, capture_output=True)
    path = next(out.glob("*.tar.gz"))
    b = errata.Bundle.open(path)
    assert len(b) == len(errata.default_bundle())
    assert b.match("CUDA error: misaligned address")[0].id == "cuda/misaligned-address"
    assert b.license == "CC-BY-4.0" == errata.default_bundle().license
    # A bundle whose bytes were changed does not verify.
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    with pytest.raises(errata.BundleError):
        errata.Bundle.from_bytes(bytes(data))
    with pytest.raises(errata.BundleError):
        errata.Bundle.from_bytes(b"not a bundle")
    with pytest.raises(OSError):
        errata.Bundle.open(tmp_path / "missing.tar.gz")


def run_python(code):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True)


def test_install_prints_advice_under_the_traceback():
    r = run_python(
        """
        import errata
        errata.install()
        raise RuntimeError("CUDA error: device-side assert triggered")
        """
    )
    assert r.returncode == 1
    assert "Traceback" in r.stderr and "RuntimeError: CUDA error: device-side assert triggered" in r.stderr
    after = r.stderr.split("RuntimeError: CUDA error: device-side assert triggered", 1)[1]
    assert "errata: cuda/device-side-assert" in after
    assert "try: " in after and "does not help: " in after
    # An unknown error gets the plain traceback only.
    r = run_python(
        """
        import errata
        errata.install()
        raise KeyError("nothing known")
        """
    )
    assert "KeyError" in r.stderr and "errata:" not in r.stderr


def test_advise_context_manager_in_chinese_reraises():
    r = run_python(
        """
        import sys, errata
        try:
            with errata.advise(lang="zh", file=sys.stdout):
                raise RuntimeError("CUDA error: out of memory")
        except RuntimeError as e:
            print("re-raised:", e)
        """
    )
    assert r.returncode == 0, r.stderr
    assert "errata: cuda/out-of-memory" in r.stdout
    assert "原因：" in r.stdout and "可行：" in r.stdout
    assert "re-raised: CUDA error: out of memory" in r.stdout


def test_type_stubs_ship_with_the_package():
    import importlib.resources as res

    files = {p.name for p in res.files("errata").iterdir()}
    assert {"py.typed", "_errata.pyi"} <= files


def test_report_outcome_writes_a_record_to_submit(tmp_path):
    path = errata.report_outcome(
        "cuda/misaligned-address", "workaround:0", "worked", "github:py-test",
        directory=str(tmp_path), gpu="NVIDIA H200", date="2026-11-20",
    )
    assert path == str(tmp_path / "cuda" / "misaligned-address.jsonl")
    lines = [json.loads(l) for l in open(path, encoding="utf-8")]
    assert lines == [{"entry": "cuda/misaligned-address", "item": "workaround:0", "outcome": "worked",
                      "date": "2026-11-20", "env": {"gpu": "NVIDIA H200"}, "reporter": "github:py-test"}]
    # Every problem named, nothing written.
    try:
        errata.report_outcome("cuda/misaligned-address", "workaround:99", "maybe", "x", directory=str(tmp_path))
    except ValueError as e:
        assert "no workaround:99" in str(e) and "`maybe`" in str(e)
    else:
        raise AssertionError("a bad record was accepted")
    assert len(open(path, encoding="utf-8").read().splitlines()) == 1


def test_decode_gives_every_family_and_the_entry():
    meanings = errata.decode(13)
    families = [m["family"] for m in meanings]
    assert families == ["cudaError_t", "cublasStatus_t", "cufftResult", "cusolverStatus_t", "nvmlReturn_t", "Xid"]
    cublas = meanings[1]
    assert cublas == {
        "family": "cublasStatus_t",
        "name": "CUBLAS_STATUS_EXECUTION_FAILED",
        "number": 13,
        "description": "",
        "entry": "cublas/execution-failed",
    }
    narrowed = errata.decode("0x2bc", family="cuda")
    assert [m["entry"] for m in narrowed] == ["cuda/illegal-memory-access"]
    assert errata.decode(123456) == []
    with pytest.raises(ValueError, match="family"):
        errata.decode(1, family="cuda13")
    with pytest.raises(ValueError):
        errata.decode("7 00")


def test_python_conventions_version_errors_pickling_equality_to_dict(tmp_path):
    import pickle
    import re

    assert re.match(r"^\d+\.\d+", errata.__version__), errata.__version__
    with pytest.raises(FileNotFoundError):
        errata.scan(tmp_path / "no-such.log")
    with pytest.raises(FileNotFoundError):
        errata.Bundle.open(tmp_path / "no-such-bundle.tar.gz")
    found = errata.match("RuntimeError: CUDA error: an illegal memory access was encountered")
    m = found[0]
    again = pickle.loads(pickle.dumps(m))
    assert again == m and again is not m
    import json

    other = type(m)._from_json(json.dumps({**m.to_dict(), "line": 99}))
    assert other.line == 99 and other != m
    d = m.to_dict()
    assert d["id"] == "cuda/illegal-memory-access"
    assert {"action", "how", "condition", "evidence", "success_rate", "basis", "sources"} <= set(d["workarounds"][0])
    # Data fields the package used to drop: a workaround's condition.
    assert any(w.condition for w in m.workarounds)
    entry = errata.entry("cuda/illegal-memory-access")
    assert pickle.loads(pickle.dumps(entry)) == entry
    hit = errata.search("illegal memory access")[0]
    assert pickle.loads(pickle.dumps(hit)) == hit


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_install_advises_in_threads_too(capsys):
    import threading

    before = threading.excepthook
    errata.install()
    try:
        def boom():
            raise RuntimeError("CUDA error: an illegal memory access was encountered")

        t = threading.Thread(target=boom)
        t.start()
        t.join()
    finally:
        errata.uninstall()
    err = capsys.readouterr().err
    assert "cuda/illegal-memory-access" in err, err
    assert threading.excepthook is before


def test_package_metadata_names_its_readme_and_urls():
    from importlib.metadata import metadata

    meta = metadata("errata")
    assert meta["Version"] == errata.__version__
    urls = meta.get_all("Project-URL") or []
    assert any(u.startswith("Repository, https://github.com/") for u in urls), urls
    assert "errata" in (meta.get_payload() or meta["Description"] or ""), "README as the long description"


def test_incidents_name_the_first_cause_across_logs():
    case = os.path.join(REPO, "tests", "fixtures", "incidents", "xid79-launch-failure-watchdog")
    paths = sorted(os.path.join(case, n) for n in os.listdir(case) if n.endswith(".log"))
    found = errata.incidents(paths)
    assert len(found) == 1, found
    first = found[0]
    assert first["first_cause"]["id"] == "xid/79-fallen-off-the-bus"
    assert first["first_cause"]["file"].endswith("kern.log")
    assert first["operator_action"] == "reboot-node"
    ids = {m["id"] for m in first["members"]}
    assert {"cuda/launch-failure", "nccl/watchdog-collective-timeout"} <= ids
    # The same from texts; a bad window is a ValueError.
    texts = {os.path.basename(p): open(p, encoding="utf-8").read() for p in paths}
    assert errata.incidents(texts)[0]["first_cause"]["file"] == "kern.log"
    with pytest.raises(ValueError):
        errata.incidents(texts, window_minutes=-1)
    assert errata.incidents({"quiet.log": "all good\n"}) == []


def test_audit_finds_the_known_bad_environment_and_stays_quiet_on_a_good_one():
    env = os.path.join(REPO, "tests", "fixtures", "env")
    bad = open(os.path.join(env, "collect_env_driver_too_old_torch160cu102_v100.txt"), encoding="utf-8").read()
    report = errata.audit(bad)
    assert [f["id"] for f in report["findings"]] == ["cuda/insufficient-driver", "pytorch/driver-too-old"]
    assert report["facts"]["driver"] == "418.67"
    assert report["findings"][0]["because"] == {"driver_too_old_for_torch_cuda": "true"}
    good = open(os.path.join(env, "collect_env_healthy_torch291cu126_h100.txt"), encoding="utf-8").read()
    assert errata.audit(good)["findings"] == []
    with pytest.raises(ValueError):
        errata.audit(good, lang="fr")


def test_pasting_any_entrys_own_message_ranks_that_entry_first():
    import glob

    wrong = []
    for path in sorted(glob.glob(os.path.join(REPO, "data", "signatures", "*", "*.json"))):
        with open(path, encoding="utf-8") as f:
            e = json.load(f)
        for lang, text in (("en", e["signature"]), ("zh", e["signature_zh"])):
            hits = errata.search(text, lang=lang, limit=3)
            if not hits or hits[0].id != e["id"]:
                wrong.append((lang, e["id"], [h.id for h in hits]))
            assert all(0.0 <= h.score <= 1.0 for h in hits)
            assert hits == sorted(hits, key=lambda h: -h.score)
    assert wrong == [], wrong[:10]
    # A recognised message scores 1; word matches stay below 0.9.
    hits = errata.search("RuntimeError: CUDA error: an illegal memory access was encountered", limit=5)
    assert hits[0].id == "cuda/illegal-memory-access" and hits[0].score == 1.0
    assert all(h.score < 0.9 for h in errata.search("sticky errors restart", limit=20))


def test_the_wheel_installs_the_errata_command(tmp_path):
    # The console script sits beside the interpreter of the (clean) virtual environment
    # the wheel was installed into; it runs from a directory with no data.
    script = os.path.join(os.path.dirname(sys.executable), "errata")
    assert os.path.isfile(script), script
    out = subprocess.run([script, "--version"], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("errata ") and "knowledge base" in out.stdout
    log = tmp_path / "train.log"
    log.write_text("RuntimeError: CUDA error: an illegal memory access was encountered\n")
    out = subprocess.run([script, "match", str(log), "--format", "json"], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert json.loads(out.stdout.splitlines()[0])["id"] == "cuda/illegal-memory-access"
    out = subprocess.run([script, "decode", "--family", "nosuch", "1"], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 2


def test_the_wheel_carries_the_code_and_data_licences():
    from importlib import resources

    licences = resources.files("errata").joinpath("licences")
    names = sorted(p.name for p in licences.iterdir())
    assert names == ["LICENSE-APACHE", "LICENSE-DATA", "LICENSE-MIT"], names
    assert "Creative Commons Attribution 4.0" in licences.joinpath("LICENSE-DATA").read_text(encoding="utf-8")
    assert "Permission is hereby granted" in licences.joinpath("LICENSE-MIT").read_text(encoding="utf-8")
    assert "Apache License" in licences.joinpath("LICENSE-APACHE").read_text(encoding="utf-8")
