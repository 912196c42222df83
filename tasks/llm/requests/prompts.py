"""Prompts are versioned files: tasks/prompts/<stage>/<version>.md, with an optional
language variant <version>.<lang>.md. A prompt id is "<stage>/<version>". Rendering is a
pure function; the version and content hash go into `llm_calls` and the manifest."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from schemas.ids import sha256_text, stable_hash

PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompts"
PLACEHOLDER = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")


@dataclass(frozen=True)
class Prompt:
    prompt_id: str  # "<stage>/<version>"
    language: str
    text: str

    @property
    def version(self) -> str:
        return self.prompt_id.split("/", 1)[1]

    @property
    def sha256(self) -> str:
        return sha256_text(self.text)


class PromptError(ValueError):
    """A missing prompt file or a missing / unknown placeholder value."""


@lru_cache(maxsize=256)
def load_prompt(prompt_id: str, language: str = "en") -> Prompt:
    """The prompt file for `prompt_id`, in `language` when a variant exists, else the default."""
    stage, _, version = prompt_id.partition("/")
    if not stage or not version:
        raise PromptError(f"prompt id must look like '<stage>/<version>', got {prompt_id!r}")
    folder = PROMPTS_DIR / stage
    for candidate in (folder / f"{version}.{language}.md", folder / f"{version}.md"):
        if candidate.is_file():
            return Prompt(
                prompt_id,
                language if candidate.name.count(".") == 2 else "en",
                candidate.read_text(encoding="utf-8"),
            )
    raise PromptError(f"no prompt file for {prompt_id} under {folder.name}/")


def render(template: str, values: dict[str, Any]) -> str:
    """Fill `{{name}}` placeholders; every placeholder needs a value and every value a placeholder."""
    names = set(PLACEHOLDER.findall(template))
    missing = names - set(values)
    unused = set(values) - names
    if missing or unused:
        raise PromptError(
            f"prompt placeholders missing values {sorted(missing)}, "
            f"values without placeholder {sorted(unused)}"
        )
    return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)


def prompts_hash(prompt_ids: Iterable[str]) -> str:
    """Hash over every file (all languages) of the given prompt ids; '' when there are none."""
    ids = sorted(prompt_ids)
    if not ids:
        return ""
    contents = []
    for prompt_id in ids:
        stage, _, version = prompt_id.partition("/")
        files = sorted((PROMPTS_DIR / stage).glob(f"{version}*.md"))
        contents.append([(f.name, sha256_text(f.read_text(encoding="utf-8"))) for f in files])
    return stable_hash("prompts", ids, contents, length=32)


SECTION_MARK = re.compile(r"^<!--\s*(system|user)\s*-->\s*$", re.MULTILINE)


def render_messages(prompt: Prompt, values: dict[str, Any]) -> tuple[dict[str, str], ...]:
    """Chat messages from a prompt file with `<!-- system -->` and `<!-- user -->` parts.

    Placeholders may appear in either part; every value must be used somewhere.
    """
    parts = SECTION_MARK.split(prompt.text)
    sections = {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    if "user" not in sections:
        raise PromptError(f"prompt {prompt.prompt_id} has no '<!-- user -->' part")
    names = set(PLACEHOLDER.findall(prompt.text))
    missing, unused = names - set(values), set(values) - names
    if missing or unused:
        raise PromptError(
            f"prompt {prompt.prompt_id}: missing values {sorted(missing)}, unused values {sorted(unused)}"
        )
    fill = lambda text: PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), text)  # noqa: E731
    messages = []
    if sections.get("system"):
        messages.append({"role": "system", "content": fill(sections["system"])})
    messages.append({"role": "user", "content": fill(sections["user"])})
    return tuple(messages)
