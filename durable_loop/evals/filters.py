"""The model filter DSL: pick catalog models by id, provider or tag.

``openai/gpt-5.2,tag:stable,provider:gemini,qwen/*,!*-preview`` — comma-separated terms;
``provider:X`` and ``tag:X`` select by catalog field, ``*`` is a wildcard, a leading ``!``
excludes. Without any including term every catalog model is a candidate. A literal id
(no wildcard) that the catalog does not know is still selected: any endpoint may serve it.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from durable_loop.cli.errors import CliError
from durable_loop.core.catalog import CATALOG, CatalogEntry
from durable_loop.evals.codes import EvalCode


@dataclass(frozen=True)
class Term:
    kind: str  # id, provider, tag
    pattern: str
    exclude: bool = False

    def matches(self, entry: CatalogEntry) -> bool:
        if self.kind == "provider":
            return fnmatchcase(entry.provider, self.pattern)
        if self.kind == "tag":
            return any(fnmatchcase(tag, self.pattern) for tag in entry.tags)
        return any(fnmatchcase(name, self.pattern.lower()) for name in entry.names())

    @property
    def literal(self) -> bool:
        return self.kind == "id" and "*" not in self.pattern and not self.exclude


def parse_filter(text: str) -> list[Term]:
    terms = []
    for raw in text.split(","):
        part = raw.strip()
        if not part:
            continue
        exclude = part.startswith("!")
        part = part.removeprefix("!").strip()
        kind = "id"
        for prefix in ("provider:", "tag:"):
            if part.startswith(prefix):
                kind, part = prefix[:-1], part[len(prefix) :]
        if not part:
            raise CliError(EvalCode.BAD_MODEL_FILTER, f"empty term in model filter {text!r}")
        terms.append(Term(kind, part, exclude))
    return terms


@dataclass(frozen=True)
class Selected:
    provider: str
    model: str
    entry: CatalogEntry | None


def select_models(
    text: str, *, default_provider: str = "openrouter", catalog: tuple[CatalogEntry, ...] = CATALOG
) -> list[Selected]:
    terms = parse_filter(text)
    include = [t for t in terms if not t.exclude]
    exclude = [t for t in terms if t.exclude]
    chosen: list[Selected] = []
    for entry in catalog:
        if include and not any(t.matches(entry) for t in include):
            continue
        if any(t.matches(entry) for t in exclude):
            continue
        chosen.append(Selected(entry.provider, entry.model, entry))
    for term in include:
        if term.literal and not any(term.matches(e) for e in catalog):
            chosen.append(Selected(default_provider, term.pattern, None))
    if not chosen:
        known = ", ".join(f"{e.provider}:{e.model}" for e in catalog)
        tags = ", ".join(sorted({t for e in catalog for t in e.tags}))
        raise CliError(
            EvalCode.NO_MODELS,
            f"model filter {text!r} matches no model; catalog: {known}; tags: {tags}",
        )
    return chosen
