"""Type stubs of the compiled half of errata (``errata._errata``)."""

import os
from typing import IO, List, Optional, Union, Tuple

class BundleError(Exception): ...

class DeadEnd:
    action: str
    why_fails: str
    fail_rate: Optional[float]  # None unless counted: an estimate is `evidence` (words)
    basis: str  # "reports" | "runs" | "outcomes" | "estimate"
    evidence: str
    condition: str  # when it applies; empty: always
    sources: List[str]
    def to_dict(self) -> dict: ...

class Workaround:
    action: str
    how: str
    success_rate: Optional[float]  # None unless counted: an estimate is `evidence` (words)
    basis: str  # "reports" | "runs" | "outcomes" | "estimate"
    evidence: str
    condition: str  # when it applies; empty: always
    sources: List[str]
    def to_dict(self) -> dict: ...

class Match:
    id: str
    line: int
    column: int
    text: str
    signature: str
    root_cause: str
    dead_ends: List[DeadEnd]
    workarounds: List[Workaround]
    sources: List[str]
    verification: str
    def to_dict(self) -> dict: ...

class Entry:
    id: str
    signature: str
    signature_zh: str
    json: str
    def to_dict(self) -> dict: ...

class Hit:
    kind: str
    id: str
    title: str
    path: Optional[str]
    score: float
    def to_dict(self) -> dict: ...

class Bundle:
    @staticmethod
    def open(path: Union[str, "os.PathLike[str]"]) -> "Bundle": ...
    @staticmethod
    def from_bytes(data: bytes) -> "Bundle": ...
    @property
    def version(self) -> str: ...
    @property
    def license(self) -> Optional[str]: ...
    def __len__(self) -> int: ...
    def match(self, text: str, lang: str = "en") -> List[Match]: ...
    def scan(self, source: Union[str, "os.PathLike[str]", IO[bytes]], lang: str = "en") -> List[Match]: ...
    def entry(self, id: str) -> Optional[Entry]: ...
    def decode(self, value: str, family: Optional[str] = None) -> List[dict]: ...
    def incidents(self, logs: List[Tuple[str, str]], window_minutes: float = 30.0) -> List[dict]: ...
    def audit(self, report: str, lang: str = "en") -> dict: ...
    def report_outcome(
        self,
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
    ) -> str: ...
    def search(self, query: str, lang: str = "en", limit: int = 10) -> List[Hit]: ...
