"""The self-installing pre-commit hooks (`.pre-commit-hooks.yaml`, `language: python`):
the real `pre-commit try-repo` installs the repository's root pyproject.toml, which pulls
in the errata wheel under test, and runs its `errata` command on a scratch knowledge base
whose PATH has no errata of its own.

Needs pre-commit (ERRATA_PRE_COMMIT, or on PATH / ~/.local/bin) and ERRATA_FIND_LINKS:
directories (space-separated) holding the errata wheel and the build backend's wheel
(.ci/requirements-hook-build.txt), as `.ci/run` prepares them. pip runs offline.
"""

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

import errata

REPO = Path(os.environ.get("ERRATA_REPO", Path(__file__).parents[3])).resolve()
FIND_LINKS = os.environ.get("ERRATA_FIND_LINKS")


def _pre_commit():
    found = os.environ.get("ERRATA_PRE_COMMIT") or shutil.which("pre-commit")
    local = Path.home() / ".local/bin/pre-commit"
    if not found and local.is_file():
        found = str(local)
    if found and FIND_LINKS:
        return found
    if os.environ.get("ERRATA_SKIP_TOOLS") == "1":
        pytest.skip("ERRATA_SKIP_TOOLS=1: pre-commit or ERRATA_FIND_LINKS missing")
    pytest.fail(
        "the self-installing hooks need pre-commit (.ci/requirements-tools.txt) and "
        "ERRATA_FIND_LINKS (the errata wheel's directory and the build backend's, as "
        ".ci/run prepares them); set ERRATA_SKIP_TOOLS=1 to skip"
    )


def _git(cwd, *args):
    subprocess.run(
        ["git", "-c", "user.name=errata", "-c", "user.email=errata@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _committed(path):
    _git(path, "init", "-q")
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "-m", "scratch")
    return path


@pytest.fixture
def hooks(tmp_path):
    """A git repository holding what pre-commit needs of this one: the hook definitions
    and the root pyproject.toml it pip-installs."""
    repo = tmp_path / "hooks"
    repo.mkdir()
    for name in (".pre-commit-hooks.yaml", "pyproject.toml"):
        shutil.copy(REPO / name, repo / name)
    return _committed(repo)


@pytest.fixture
def kb(tmp_path):
    repo = tmp_path / "kb"
    shutil.copytree(REPO / "data", repo / "data")
    return _committed(repo)


def _try_repo(pre_commit, hooks, kb, hook, *files):
    # PATH without the virtual environment this test runs in (whose bin/ has the wheel's
    # `errata`) or any cargo-built errata: only the hook's own install can provide it.
    path = os.pathsep.join(
        d for d in ("/usr/local/bin", "/usr/bin", "/bin") if not Path(d, "errata").exists()
    )
    git_dir = os.path.dirname(shutil.which("git"))
    if git_dir not in path.split(os.pathsep):
        path = git_dir + os.pathsep + path
    env = {
        # pre-commit itself may be a `pip install --user` one, found through HOME.
        "HOME": os.environ.get("HOME", str(kb.parent)),
        "PATH": path,
        "PRE_COMMIT_HOME": str(kb.parent / "pre-commit-home"),
        "PRE_COMMIT_COLOR": "never",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": FIND_LINKS,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    assert shutil.which("errata", path=path) is None
    return subprocess.run(
        [pre_commit, "try-repo", str(hooks), hook, "--files", *files],
        cwd=kb,
        env=env,
        capture_output=True,
        text=True,
    )


def test_errata_check_installs_itself_and_fails_a_broken_entry(hooks, kb):
    pre_commit = _pre_commit()
    entry = "data/signatures/cuda/out-of-memory.json"
    out = _try_repo(pre_commit, hooks, kb, "errata-check", entry)
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"errata check\.+Passed", out.stdout), out.stdout

    (kb / entry).write_text('{"id": "cuda/out-of-memory",\n', encoding="utf-8")
    out = _try_repo(pre_commit, hooks, kb, "errata-check", entry)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Failed" in out.stdout and "json-syntax" in out.stdout, out.stdout


def test_errata_fmt_installs_itself_and_rewrites_an_unformatted_entry(hooks, kb):
    pre_commit = _pre_commit()
    entry = kb / "data/signatures/cuda/out-of-memory.json"
    canonical = entry.read_text(encoding="utf-8")
    entry.write_text(canonical.replace("\n  ", "\n    "), encoding="utf-8")
    name = "data/signatures/cuda/out-of-memory.json"
    out = _try_repo(pre_commit, hooks, kb, "errata-fmt", name)
    # pre-commit fails a hook that modified files; the file is canonical again.
    assert out.returncode == 1 and "files were modified by this hook" in out.stdout, out.stdout
    assert entry.read_text(encoding="utf-8") == canonical
    out = _try_repo(pre_commit, hooks, kb, "errata-fmt", name)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_hooks_install_the_errata_of_their_own_release():
    # `rev: vX.Y.Z` must install errata X.Y.Z: the root pyproject's version and its pin
    # follow the workspace's version, which is the wheel's.
    root = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    cargo = tomllib.loads((REPO / "Cargo.toml").read_text(encoding="utf-8"))
    version = cargo["workspace"]["package"]["version"]
    assert root["project"]["version"] == version
    assert root["project"]["dependencies"] == [f"errata=={version}"]
    assert errata.__version__ == version
    hooks = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    ids = re.findall(r"^- id: (\S+)\n(?:  .*\n)*?  language: (\S+)", hooks, re.M)
    assert sorted(ids) == [
        ("errata-check", "python"),
        ("errata-check-system", "system"),
        ("errata-fmt", "python"),
        ("errata-fmt-system", "system"),
    ], ids
