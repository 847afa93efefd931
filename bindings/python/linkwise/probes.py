"""Probe reports from Python: load what ``linkwise probe`` measured, check it against the
catalog's claims (``validate``), and run the probes where this build and machine allow."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _core
from ._records import Field, Record, RecordList
from .catalog import Catalog, _catalog_core

JsonDict = Dict[str, Any]


class ProbeReport(Record):
    """A probe report (data/schema/probe-report.schema.json): the environment and each probe's
    results, every number with its unit and counting convention."""

    __slots__ = ()
    _summary = ("schema_version",)

    schema_version = Field[int]("Report schema version.")
    environment = Field[JsonDict]("Where it ran: host, GPUs, versions, VM, cloud instance type.")
    probes = Field[List[JsonDict]]("Each probe's run: name, status, reason, results.")

    @classmethod
    def load(cls, path: Union[str, os.PathLike[str]]) -> ProbeReport:
        """Reads and checks a report file; ``linkwise.InvalidInputError`` naming the field when
        it is malformed."""
        return cls(_core.load_report(os.fspath(path)))

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> ProbeReport:
        """Checks a report document (as json.load gives it) and wraps it."""
        return cls(_core.parse_report(dict(document)))

    def __repr__(self) -> str:
        env = self._data.get("environment") or {}
        gpus = env.get("gpus") or []
        names = sorted({g.get("name", "?") for g in gpus})
        return (f"ProbeReport({env.get('created_at')!r}, host={env.get('hostname')!r}, "
                f"{len(gpus)} GPUs {names}, {len(self._data.get('probes') or [])} probes)")


class Verdict(Record):
    """One catalog claim (NVLink, network, HBM, PCIe) against the measurement."""

    __slots__ = ()
    _summary = ("claim", "verdict", "expected", "measured", "unit", "efficiency")

    claim = Field[str]("'nvlink', 'network', 'hbm' or 'pcie'.")
    verdict = Field[str]("'meets', 'below' or 'cannot-check'.")
    claimed = Field[Optional[float]]("The catalog figure, in claimed_unit.")
    claimed_unit = Field[str]("Unit of the claim: 'GB/s', 'Gbit/s', 'PCIe gen'.")
    claim_convention = Field[str]("How the catalog counts the claim.")
    expected = Field[Optional[float]]("The claim in the measurement's unit and counting.")
    measured = Field[Optional[float]]("The measured figure, in unit.")
    unit = Field[str]("Unit of expected and measured.")
    efficiency = Field[Optional[float]]("measured / expected.")
    min_efficiency = Field[float]("The efficiency a healthy system reaches at least.")
    measurement = Field[str]("Which result of the report was used.")
    reason = Field[str]("Why this verdict, in words.")


class VerdictList(RecordList[Verdict]):
    """Verdicts, one per claim, with ``to_pandas()``."""

    _item = Verdict
    _columns = ("claim", "verdict", "claimed", "claimed_unit", "expected", "measured", "unit",
                "efficiency", "reason")


class ValidationResult(Record):
    """``linkwise validate``: the instance the report was matched to and one verdict per claim."""

    __slots__ = ()
    _summary = ("instance", "any_below")

    instance = Field[JsonDict]("The catalog instance matched: id (None when not named), gpu_model, "
                               "detected_by ('option', 'cloud-metadata', 'gpu-name-and-count', "
                               "'none') and reason.")
    verdicts = Field[VerdictList]("One verdict per claim.", VerdictList)
    any_below = Field[bool]("True when a claim is below what the catalog says (the CLI exits 1).")

    def to_pandas(self) -> Any:
        """The verdicts as a DataFrame (pandas imported here)."""
        return self.verdicts.to_pandas()

    def _repr_html_(self) -> str:
        return self.verdicts._repr_html_()


def _report_document(report: Union[ProbeReport, Mapping[str, Any], str, os.PathLike[str]]) -> JsonDict:
    """The report's document: a ProbeReport's, a dict as given (the core checks it), or a file's."""
    if isinstance(report, ProbeReport):
        return report._data
    if isinstance(report, Mapping):
        return dict(report)
    return ProbeReport.load(report)._data


def validate(report: Union[ProbeReport, Mapping[str, Any], str, os.PathLike[str]],
             instance: Optional[str] = None, catalog: Optional[Catalog] = None) -> ValidationResult:
    """Each claim of the catalog against the report (``linkwise validate``). ``instance``: the
    catalog id the report was taken on; None lets the core detect it from the report."""
    if instance is not None and not isinstance(instance, str):
        raise TypeError(f"instance: expected an id string, got {type(instance).__name__}")
    return ValidationResult(_core.validate(_report_document(report), _catalog_core(catalog), instance))


def validate_fleet(reports: Sequence[Union[ProbeReport, Mapping[str, Any], str, os.PathLike[str]]],
                   instance: Optional[str] = None, catalog: Optional[Catalog] = None,
                   include_synthetic: bool = False) -> JsonDict:
    """The fleet verdict over reports of one instance type (``linkwise validate --fleet``, the
    service's ``GET /v1/instances/{id}/validation``): per claim, the median report's share of the
    claim against what a healthy system reaches. Returns the same document as the CLI's --json."""
    if instance is not None and not isinstance(instance, str):
        raise TypeError(f"instance: expected an id string, got {type(instance).__name__}")
    documents = [_report_document(report) for report in reports]
    return _core.validate_fleet(documents, _catalog_core(catalog), instance, bool(include_synthetic))


def probe(quick: bool = True, only: Optional[Sequence[str]] = None) -> ProbeReport:
    """Runs the link probes on this machine (``linkwise probe``) and returns the report.
    ``quick``: the short run; ``only``: probe names to run (``linkwise probe --list``).
    Raises ``linkwise.UnsupportedError`` when the package was built without the CUDA probes
    (``pip install . -Ccmake.define.LINKWISE_CUDA=ON``) or no GPU is present."""
    names: Optional[List[str]] = None
    if only is not None:
        if isinstance(only, str):
            only = [only]
        names = [str(name) for name in only]
    return ProbeReport(_core.probe(bool(quick), names))


def has_probes() -> bool:
    """Whether this build includes the CUDA probes (a GPU is still needed to run them)."""
    return bool(_core.has_probes)
