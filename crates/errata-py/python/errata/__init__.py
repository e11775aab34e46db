"""Recognise GPU/CUDA errors in text and logs, and say what not to try and what works.

The knowledge base (the errata data bundle built from the project's ``data/``) ships
inside this package, so everything works offline::

    import errata
    for m in errata.match("RuntimeError: CUDA error: misaligned address"):
        print(m.id, m.root_cause, [w.action for w in m.workarounds])

``errata.Bundle.open(path)`` loads another (newer) bundle, verified the same way.
``errata.install()`` prints the advice under a CUDA error's traceback.
"""

from __future__ import annotations

import os
import sys
from importlib import resources
from typing import IO, List, Optional, Union

from ._errata import Bundle, BundleError, DeadEnd, Entry, Hit, Match, Workaround

try:
    from importlib.metadata import PackageNotFoundError, version as _version

    __version__ = _version("errata")
except PackageNotFoundError:  # imported from a source tree, not installed
    __version__ = "0+unknown"

__all__ = [
    "__version__",
    "Bundle",
    "BundleError",
    "DeadEnd",
    "Entry",
    "Hit",
    "Match",
    "Workaround",
    "default_bundle",
    "match",
    "scan",
    "entry",
    "search",
    "install",
    "uninstall",
    "advise",
    "format_advice",
    "report_outcome",
    "decode",
    "incidents",
    "audit",
]

_DEFAULT: Optional[Bundle] = None


def default_bundle() -> Bundle:
    """The bundle shipped in this package (read and verified once, then kept)."""
    global _DEFAULT
    if _DEFAULT is None:
        data = resources.files(__name__).joinpath("data")
        bundles = sorted(p.name for p in data.iterdir() if p.name.endswith(".tar.gz"))
        if len(bundles) != 1:
            raise BundleError(f"expected one bundle in the package's data/, found {bundles}")
        _DEFAULT = Bundle.from_bytes(data.joinpath(bundles[0]).read_bytes())
    return _DEFAULT


def match(text: str, lang: str = "en") -> List[Match]:
    """The known errors in ``text``, by line, most specific first within a line."""
    return default_bundle().match(text, lang)


def scan(source: Union[str, "os.PathLike[str]", IO[bytes]], lang: str = "en") -> List[Match]:
    """The known errors in a log of any size (a path or a binary file), streamed."""
    return default_bundle().scan(source, lang)


def entry(id: str) -> Optional[Entry]:
    """The entry with this id (``cuda/illegal-memory-access``), or None."""
    return default_bundle().entry(id)


def report_outcome(
    entry: str,
    item: str,
    outcome: str,
    reporter: str,
    directory: str = "errata-outcomes",
    gpu: Optional[str] = None,
    driver: Optional[str] = None,
    cuda: Optional[str] = None,
    torch: Optional[str] = None,
    source: Optional[str] = None,
    date: Optional[str] = None,
) -> str:
    """Record what happened when you tried a dead end or a workaround of ``entry``.

    ``item`` is ``"dead_end:<i>"`` or ``"workaround:<i>"`` (0-based, in the entry's
    order), ``outcome`` ``"worked"`` or ``"failed"``. The record is checked against the
    entry and appended to ``<directory>/<domain>/<slug>.jsonl``, a file to submit in a
    pull request (as ``data/outcomes/...``); the knowledge base then counts it. Returns
    the file's path; raises ValueError naming every problem, writing nothing.
    """
    return default_bundle().report_outcome(
        entry, item, outcome, reporter, directory, gpu, driver, cuda, torch, source, date
    )


def decode(value: Union[str, int], family: Optional[str] = None) -> List[dict]:
    """Every family's meaning of a bare error number or name, like ``errno``.

    ``decode(13)`` answers for cudaError_t, cuBLAS, cuFFT, cuSOLVER, NVML and Xid alike
    (never a guess at one family); ``family="cublas"`` narrows it. Each meaning is a
    dict ``{family, name, number, description, entry}``, ``entry`` the knowledge-base
    id that explains it or None. Raises ValueError for input that is neither.
    """
    return default_bundle().decode(str(value), family)


def incidents(logs, window_minutes: float = 30.0) -> List[dict]:
    """One incident from many logs of one failure.

    ``logs`` is a mapping of log name to text, or a list of paths to read (per-rank
    training logs, ``dmesg -T`` / journal / syslog kernel logs, NCCL debug logs). The
    known errors are grouped by time, GPU and the knowledge base's transition graph;
    each incident is a dict ``{incident, first_cause: {id, file, line},
    operator_action, ordered_by, members: [...]}`` (as ``errata incidents --format
    json`` prints it), in the order they began.
    """
    if isinstance(logs, dict):
        pairs = [(str(name), str(text)) for name, text in logs.items()]
    else:
        pairs = []
        for path in logs:
            with open(path, encoding="utf-8", errors="replace") as f:
                pairs.append((str(path), f.read()))
    return default_bundle().incidents(pairs, window_minutes)


def audit(report: str, lang: str = "en") -> dict:
    """Known-bad environments before anything crashes.

    ``report`` is the text of ``python -m torch.utils.collect_env``, ``nvidia-smi``,
    ``nvidia-smi -q``, ``nvcc --version`` or ``pip list`` (any mix). Returns
    ``{facts, findings: [{id, because, severity, note, fix}]}``; empty findings when
    nothing known is wrong.
    """
    return default_bundle().audit(report, lang)


def search(query: str, lang: str = "en", limit: int = 10) -> List[Hit]:
    """Entries and articles containing every word of ``query``, best first."""
    return default_bundle().search(query, lang, limit)


def format_advice(found: List[Match], lang: str = "en") -> str:
    """The advice for matches as text, each entry once: what it is, why, what not to
    try, what to try."""
    zh = lang == "zh"
    lines: List[str] = []
    seen = set()
    for m in found:
        if m.id in seen:
            continue
        seen.add(m.id)
        lines.append(f"errata: {m.id}: {m.signature}")
        lines.append(("  原因：" if zh else "  cause: ") + m.root_cause)
        for d in m.dead_ends:
            lines.append(("  无效：" if zh else "  does not help: ") + f"{d.action} ({d.evidence})")
        for w in m.workarounds:
            lines.append(("  可行：" if zh else "  try: ") + f"{w.action} ({w.evidence})")
    return "\n".join(lines)


def _exception_text(exc: BaseException) -> str:
    parts = [f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}"]
    cause = exc.__cause__ or exc.__context__
    while cause is not None and len(parts) < 8:
        parts.append(f"{type(cause).__qualname__}: {cause}")
        cause = cause.__cause__ or cause.__context__
    return "\n".join(parts)


def _advice_for(exc: BaseException, lang: str, bundle: Optional[Bundle]) -> str:
    try:
        found = (bundle or default_bundle()).match(_exception_text(exc), lang)
    except Exception:  # the hook must never hide the original error
        return ""
    return format_advice(found, lang)


_PREVIOUS_HOOK = None
_PREVIOUS_THREAD_HOOK = None
_IPYTHON_HOOKED = False


def _ipython():
    """The running IPython shell (Jupyter included), or None."""
    try:
        from IPython import get_ipython  # type: ignore
    except ImportError:
        return None
    return get_ipython()


def install(lang: str = "en", bundle: Optional[Bundle] = None, file: Optional[IO[str]] = None) -> None:
    """Print errata's advice under the traceback of any uncaught exception whose message
    is a known error (a CUDA error in PyTorch, NCCL, cuBLAS ...): in the main thread
    (``sys.excepthook``), in other threads (``threading.excepthook``) and in IPython or
    Jupyter, which report exceptions themselves. Idempotent."""
    global _PREVIOUS_HOOK, _PREVIOUS_THREAD_HOOK, _IPYTHON_HOOKED
    import threading

    if lang not in ("en", "zh"):
        raise ValueError(f"lang must be 'en' or 'zh', not {lang!r}")
    previous = _PREVIOUS_HOOK or sys.excepthook
    previous_thread = _PREVIOUS_THREAD_HOOK or threading.excepthook

    def advise_on(exc) -> None:
        advice = _advice_for(exc, lang, bundle)
        if advice:
            print(advice, file=file or sys.stderr)

    def hook(exc_type, exc, tb):
        previous(exc_type, exc, tb)
        advise_on(exc)

    def thread_hook(args):
        previous_thread(args)
        if args.exc_value is not None:
            advise_on(args.exc_value)

    _PREVIOUS_HOOK = previous
    _PREVIOUS_THREAD_HOOK = previous_thread
    sys.excepthook = hook
    threading.excepthook = thread_hook
    shell = _ipython()
    if shell is not None:

        def ipython_hook(shell, etype, evalue, tb, tb_offset=None):
            shell.showtraceback((etype, evalue, tb), tb_offset=tb_offset)
            advise_on(evalue)

        shell.set_custom_exc((BaseException,), ipython_hook)
        _IPYTHON_HOOKED = True


def uninstall() -> None:
    """Undo ``install()``."""
    global _PREVIOUS_HOOK, _PREVIOUS_THREAD_HOOK, _IPYTHON_HOOKED
    import threading

    if _PREVIOUS_HOOK is not None:
        sys.excepthook = _PREVIOUS_HOOK
        _PREVIOUS_HOOK = None
    if _PREVIOUS_THREAD_HOOK is not None:
        threading.excepthook = _PREVIOUS_THREAD_HOOK
        _PREVIOUS_THREAD_HOOK = None
    if _IPYTHON_HOOKED:
        shell = _ipython()
        if shell is not None:
            shell.set_custom_exc((), None)
        _IPYTHON_HOOKED = False


class advise:
    """A context manager: a known error raised inside gets errata's advice printed, then
    propagates unchanged::

        with errata.advise(lang="zh"):
            train()
    """

    def __init__(self, lang: str = "en", bundle: Optional[Bundle] = None, file: Optional[IO[str]] = None):
        if lang not in ("en", "zh"):
            raise ValueError(f"lang must be 'en' or 'zh', not {lang!r}")
        self.lang, self.bundle, self.file = lang, bundle, file

    def __enter__(self) -> "advise":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc is not None:
            advice = _advice_for(exc, self.lang, self.bundle)
            if advice:
                print(advice, file=self.file or sys.stderr)
        return False


