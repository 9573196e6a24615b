"""The driver contract's command line, declared once (schema/contract.json): each flag with its type, default and
limits, the usage errors and their wording, the exit statuses and the contract's version. The Python harness
parses with it (harness/options.py), the runner takes its limits from it (workload.py), check-driver's usage cases
are made from it (conformance/checks.py), and docs/raw-format.md's tables of flags and of bad usage are written from
it (`python -m clientbench.contract docs/raw-format.md`; test_contract.py fails when the page differs). The native
harnesses keep their own code, and test_contract.py runs each of them through every case here.

A usage case is a command line that must exit 2 with a message (the wording every harness of the project prints:
a driver from outside need only name the flag), or one at a limit that must be accepted."""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any


def _load() -> dict[str, Any]:
    # the package's file, read without importing clientbench.schema (which takes the version from here)
    doc: dict[str, Any] = json.loads(resources.files("clientbench").joinpath("schema/contract.json").read_text("utf-8"))
    return doc


_DOC = _load()
#: the contract's version: documents say `clientbench.raw/<VERSION>`
VERSION: int = _DOC["version"]
#: the raw documents' versions the runner reads
READ: tuple[int, ...] = tuple(_DOC["read"])
EXIT_DOCUMENT, EXIT_USAGE, EXIT_UNSUPPORTED = (_DOC["exit"][k] for k in ("document", "usage", "unsupported"))
WORDING: Mapping[str, str] = _DOC["wording"]


def schema_id(version: int = VERSION) -> str:
    """`clientbench.raw/<version>`, the `schema` a document of that version declares."""
    return str(_DOC["schema"]).format(version=version)


def version_of(schema: object) -> int | None:
    """The version a document's `schema` declares (None when it is not a raw document's)."""
    m = re.fullmatch(r"clientbench\.raw/(\d+)", schema) if isinstance(schema, str) else None
    return int(m[1]) if m else None


@dataclass(frozen=True)
class Flag:
    """One flag of the contract: `type` is integer, number (finite), choice, path, url or switch."""

    flag: str
    type: str
    default: Any
    meaning: str
    since: int
    outside_since: int
    minimum: int | float | None = None
    maximum: int | float | None = None
    exclusive_min: float | None = None
    max_note: str | None = None
    choices: tuple[str, ...] = ()
    required: bool = False
    #: --rate: R/W at most this (a schedule no finer than 1 µs per worker)
    per_worker_max: float | None = None
    #: flags that give a value of this one its meaning (--seed goes with --rate)
    with_: tuple[str, ...] = ()
    #: its value just below its minimum is a case of check-driver's
    check: bool = False

    @property
    def dest(self) -> str:
        return self.flag[2:].replace("-", "_")

    @property
    def limited(self) -> bool:
        return self.type in ("integer", "number")

    def rule(self, text: str) -> str:
        """The usage error of a bad value (`text` as given)."""
        if self.type == "choice":
            return WORDING["choice"].format(flag=self.flag, choices=", ".join(self.choices), value=text)
        if self.type == "integer":
            key = "integer" if self.maximum is None else "integer_range"
        else:
            key = "positive" if self.maximum is None else "positive_max"
        return WORDING[key].format(flag=self.flag, min=self.minimum, max=_plain(self.maximum), value=text)

    def parse(self, text: str) -> Any:
        """The value of `text`, or ValueError with the usage error's message."""
        if self.type == "choice":
            if text not in self.choices:
                raise ValueError(self.rule(text))
            return text
        if self.type == "integer":
            try:
                value: int | float = int(text)
            except ValueError:
                raise ValueError(self.rule(text)) from None
            if value < (self.minimum or 0) or (self.maximum is not None and value > self.maximum):
                raise ValueError(self.rule(text))
            return value
        if self.type == "number":
            try:
                value = float(text)
            except ValueError:
                raise ValueError(self.rule(text)) from None
            if not (math.isfinite(value) and value > (self.exclusive_min or 0)):
                raise ValueError(self.rule(text))
            if self.maximum is not None and value > self.maximum:
                raise ValueError(self.rule(text))
            return value
        return text

    def outside(self) -> list[str]:
        """The values just outside its limits."""
        if self.type == "choice":
            return ["bogus"]
        if self.type == "integer":
            assert self.minimum is not None
            return [str(self.minimum - 1)] + ([] if self.maximum is None else [str(self.maximum + 1)])
        if self.type == "number":
            below = [_plain(self.exclusive_min or 0)]
            return below + ([] if self.maximum is None else [_plain(self.maximum + 1)])
        return []

    def inside(self) -> list[str]:
        """The values at its limits (the smallest a number above an exclusive minimum takes here: a thousandth)."""
        if self.type == "choice":
            return list(self.choices)
        if self.type == "integer":
            return [str(self.minimum)] + ([] if self.maximum is None else [str(self.maximum)])
        if self.type == "number":
            return [_plain((self.exclusive_min or 0) + 0.001)] + (
                [] if self.maximum is None else [_plain(self.maximum)]
            )
        return []

    def values(self) -> str:
        """Its values, for the docs' table."""
        if self.type == "choice":
            names = [f"`{c}`" for c in self.choices]
            return ", ".join(names[:-1]) + " or " + names[-1]
        note = f" ({self.max_note})" if self.max_note else ""
        if self.type == "integer":
            if self.maximum is None:
                return f"whole number ≥ {self.minimum:,}"
            return f"whole number, {self.minimum:,} to {self.maximum:,}{note}"
        if self.type == "number":
            top = "" if self.maximum is None else f", at most {self.maximum:,}{note}"
            return f"number > {_plain(self.exclusive_min or 0)}{top}"
        return {"url": "URL", "path": "file", "switch": "(none)"}[self.type]


@dataclass(frozen=True)
class Rule:
    """A usage error that is not one flag's value out of its limits: `args` (after the case's `--url`, which
    `url` replaces: None for none at all) must exit 2, and the project's harnesses print `message`; `ok`, when
    given, is the case beside it that must be accepted."""

    id: str
    flag: str  # the flag the message must name (a|b: either)
    message: str
    since: int
    args: tuple[str, ...] = ()
    url: str | None = ""
    ok: tuple[str, ...] | None = None
    check: str | None = None  # its name among check-driver's usage cases
    #: a targets file's: the line at fault, and the body file it names ({body}, a placeholder of the case's)
    line: int | None = None
    body: str | None = None

    def text(self, **values: object) -> str:
        """The message, its placeholders filled: {path} (the value of the flag named), {url}, {line}, {body}."""
        return self.message.format(**values)


def _flag(d: Mapping[str, Any]) -> Flag:
    return Flag(
        flag=d["flag"],
        type=d["type"],
        default=d["default"],
        meaning=d["meaning"],
        since=d["since"],
        outside_since=d.get("outside_since", d["since"]),
        minimum=d.get("min"),
        maximum=d.get("max"),
        exclusive_min=d.get("exclusive_min"),
        max_note=d.get("max_note"),
        choices=tuple(d.get("choices", ())),
        required=d.get("required", False),
        per_worker_max=d.get("per_worker_max"),
        with_=tuple(d.get("with", ())),
        check=d.get("check", False),
    )


def _rule(d: Mapping[str, Any]) -> Rule:
    return Rule(
        id=d["id"],
        flag=d["flag"],
        message=d["message"],
        since=d["since"],
        args=tuple(d.get("args", ())),
        url=d.get("url", ""),
        ok=tuple(d["ok"]) if "ok" in d else None,
        check=d.get("check"),
        line=d.get("line"),
        body=d.get("body"),
    )


FLAGS: dict[str, Flag] = {f.flag: f for f in map(_flag, _DOC["flags"])}
RULES: dict[str, Rule] = {r.id: r for r in map(_rule, _DOC["rules"])}
#: the files the cases name, by placeholder: their text ({url}, {text}, ... filled in), None for one that must not
#: exist; {ca} (a PEM certificate) and {crl} (a PEM CRL alone) are given by whoever runs the cases (GIVEN)
FILES: Mapping[str, str | None] = {
    k: v["text"] for k, v in _DOC["files"].items() if not k.startswith("$") and not v.get("given")
}
GIVEN: tuple[str, ...] = tuple(k for k, v in _DOC["files"].items() if not k.startswith("$") and v.get("given"))
#: how docs/raw-format.md shows each file, and what it is
SHOWN: Mapping[str, str] = {k: v["shown"] for k, v in _DOC["files"].items() if not k.startswith("$")}
ABOUT: Mapping[str, str] = {v["shown"]: v["about"] for k, v in _DOC["files"].items() if not k.startswith("$")}


def flag(name: str) -> Flag:
    return FLAGS[name]


def rule(rule_id: str) -> Rule:
    return RULES[rule_id]


def message(kind: str, **values: Any) -> str:
    """A message of the wording's `kind`: unknown, no_value, required, ..."""
    return WORDING[kind].format(**values)


def _plain(value: float | None) -> str:
    """A number as a flag value: whole numbers without a decimal point."""
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


# -- the cases ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One command line of the contract's: `args` after `--url URL` (`url` None: no --url), and what it must do:
    exit 2 with `message` (naming `flag`), or be accepted (`message` None)."""

    name: str
    args: tuple[str, ...]
    url: str | None
    flag: str
    message: str | None
    since: int
    check: str | None = None  # the check-driver case it is
    files: tuple[str, ...] = field(default=())  # the placeholders it needs
    #: the message's own placeholders: {line}, {body} (itself a placeholder of the files')
    values: tuple[tuple[str, str], ...] = ()

    @property
    def accepted(self) -> bool:
        return self.message is None


def _placeholders(items: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted({name for item in items for name in re.findall(r"\{(\w+)\}", item)}))


def cases() -> list[Case]:
    """Every case: each limited flag's values just outside (bad usage) and at its limits (accepted), each choice
    flag's value that is not one, and each rule (with the case beside it that is accepted, where it has one)."""
    out: list[Case] = []
    for f in FLAGS.values():
        for value in f.outside():
            args = (*f.with_, f.flag, value)
            check = f"{f.flag} {value}" if f.check and value == f.outside()[0] else None
            out.append(Case(f"{f.flag} {value}", args, "{url}", f.flag, f.rule(value), f.outside_since, check))
        for value in f.inside() if f.limited else ():
            out.append(Case(f"{f.flag} {value} (accepted)", (*f.with_, f.flag, value), "{url}", f.flag, None, f.since))
    for r in RULES.values():
        url = None if r.url is None else (r.url or "{url}")
        name = r.check or r.id
        own = tuple((k, str(v)) for k, v in (("line", r.line), ("body", r.body)) if v is not None)
        files = _placeholders([*r.args, *(v for _, v in own)])
        out.append(Case(name, r.args, url, r.flag, r.message, r.since, r.check, files, own))
        if r.ok is not None:
            out.append(Case(f"{name} (accepted)", r.ok, "{url}", r.flag, None, r.since))
    return out


def check_cases() -> list[Case]:
    """check-driver's usage cases (each one check), in the order of the contract."""
    return [c for c in cases() if c.check is not None]


def write_files(folder: Path, url: str, given: Mapping[str, str] | None = None) -> dict[str, str]:
    """The files of FILES in `folder`, with `url` for the targets; returns every placeholder's value (a path, the
    url; with `given`'s {ca} and {crl} when given). A file that must not exist is a path in `folder` that does not."""
    values = {"url": url, **(given or {})}
    for name in FILES:
        values[name] = str(folder / f"contract-{name}.txt")
    for name, text in FILES.items():
        if text is not None:
            Path(values[name]).write_text(text.format(**values), encoding="utf-8")
    return values


def argv(case: Case, values: Mapping[str, str], fill: bool = True) -> list[str]:
    """The case's command line (after the driver's own argv), placeholders filled. With `fill`, --workers 1,
    --requests 1 and --timeout 5 where the case says none of them (and no --duration), so that a case that runs
    stays short."""
    args = [a.format(**values) for a in case.args]
    url = [] if case.url is None else ["--url", case.url.format(**values)]
    extra: list[str] = []
    if fill:
        for name, value in (("--workers", "1"), ("--requests", "1"), ("--timeout", "5")):
            if name not in args and not (name == "--requests" and "--duration" in args):
                extra += [name, value]
    return [*url, *extra, *args]


def expected(case: Case, values: Mapping[str, str]) -> str:
    """The message the project's harnesses print for the case: {path} is the value of the flag it names."""
    assert case.message is not None
    args = [a.format(**values) for a in case.args]
    path = args[args.index(case.flag) + 1] if case.flag in args[:-1] else ""
    url = case.url.format(**values) if case.url else ""
    own = {k: v.format(**values) for k, v in case.values}
    return case.message.format(**{**values, "path": path, "url": url, **own})


# -- docs/raw-format.md --------------------------------------------------------------------------------------


def flag_table() -> str:
    """The table of flags, as docs/raw-format.md shows it."""
    rows = ["| flag | value | default | meaning |", "|---|---|---|---|"]
    for f in FLAGS.values():
        default = "required" if f.required else "-" if f.default is None else f"`{_doc_value(f.default)}`"
        rows.append(f"| `{f.flag}` | {f.values()} | {default} | {f.meaning} |")
    return "\n".join(rows)


def usage_table() -> str:
    """The table of bad usage (exit 2): each rule's case and the message the project's harnesses print."""
    rows = ["| bad usage (exit 2), e.g. | the project's harnesses say | since |", "|---|---|---|"]
    for f in FLAGS.values():
        for value in f.outside():
            shown = " ".join((*f.with_, f.flag, value))
            rows.append(f"| `{shown}` | `{f.rule(value)}` | raw/{f.outside_since} |")
    for r in RULES.values():
        args = " ".join(r.args).format(**SHOWN)
        shown = (
            f"`{args}`"
            if r.url == ""
            else "no `--url`"
            if r.url is None
            else f"`--url {r.url} {args}`".replace(" `", "`")
        )
        filled = [a.format(**SHOWN) for a in r.args]
        path = filled[filled.index(r.flag) + 1] if r.flag in filled[:-1] else ""
        own = {"line": r.line, "body": (r.body or "").format(**SHOWN)}
        text = r.message.format(**SHOWN, path=path, url=r.url or "", **own)
        text += "..." if text.endswith(": ") else ""
        rows.append(f"| {shown} | `{text}` | raw/{r.since} |")
    table = "\n".join(rows)
    legend = "; ".join(f"{name}: {about}" for name, about in ABOUT.items() if f" {name}" in table)
    return f"{table}\n\n(The files: {legend}.)"


def _doc_value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


TABLES = {"flags": flag_table, "usage": usage_table}


def rewrite(page: str) -> str:
    """`page` with each generated table between its markers (`<!-- contract:NAME -->` ... `<!-- /contract:NAME -->`)
    written anew."""
    for name, make in TABLES.items():
        start, end = f"<!-- contract:{name} -->", f"<!-- /contract:{name} -->"
        before, sep, rest = page.partition(start)
        if not sep:
            raise ValueError(f"the page has no {start} marker")
        _, sep, after = rest.partition(end)
        if not sep:
            raise ValueError(f"the page has no {end} marker")
        page = f"{before}{start}\n{make()}\n{end}{after}"
    return page


def main(argv: Sequence[str]) -> int:
    """Write the tables into the page given (docs/raw-format.md)."""
    if len(argv) != 1:
        print("usage: python -m clientbench.contract docs/raw-format.md", file=sys.stderr)
        return 2
    page = Path(argv[0])
    page.write_text(rewrite(page.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
