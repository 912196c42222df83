"""track_character_states' extract and critic rounds as grouped requests (prompts v2): the scenes
still open in a round are grouped, in script order, while their blocks fit a token budget (at most
`max_scenes_per_request`), with content-defined boundaries keyed by the scene's number in the script
(tasks.llm.requests.request_groups), so an edited scene re-asks its own group and not every later one; each
scene is one numbered block with its heading, its candidate characters, the reviewer's notes
(extract) or the extracted states (critic) and its observable lines."""

from __future__ import annotations

from dataclasses import dataclass

from schemas.config import CharacterStatesSettings
from tasks.llm.requests.request_groups import stable_groups
from tasks.llm.requests.shapes import SHAPES
from tasks.text import count_tokens

EXTRACT_PROMPT = SHAPES["character_states"].prompt_id
CRITIC_PROMPT = SHAPES["character_states_critic"].prompt_id
MAX_SCENE_CHARS = 6000
LABELS = {
    "en": ("Scene", ": ", "Characters", "Reviewer notes", "Lines", "Extracted states"),
    "zh": ("场次", "：", "人物", "审核意见", "可见可闻的句子", "抽取的状态"),
}


@dataclass(frozen=True)
class SceneAsk:
    """One scene of a round: what its block shows."""

    item_id: str  # "<section id>#extract<round>" or "<section id>#critic<round>"
    heading: str
    characters: str
    text: str  # the lines of the scene the request shows
    notes: str  # the reviewer's notes (extract) or the extracted states (critic)
    key: str = ""  # what places the scene's group boundary: its number in the script (default: item_id)


def scene_key(index: int) -> str:
    """What places a scene's group boundary: its number in the script (its id hashes its span,
    which moves when an earlier scene is edited)."""
    return f"scene {index + 1}"


def scene_block(number: int, ask: SceneAsk, critic: bool, language: str) -> str:
    scene, colon, characters, notes, text, states = LABELS["zh" if language == "zh" else "en"]
    head = f"{scene} {number}{colon}{ask.heading}\n{characters}{colon}{ask.characters}"
    body = f'{text}{colon.strip()}\n"""\n{ask.text[:MAX_SCENE_CHARS]}\n"""'
    if critic:
        return f"{head}\n{body}\n{states}{colon.strip()}\n{ask.notes}"
    return f"{head}\n{notes}{colon}{ask.notes}\n{body}"


def scene_groups(
    asks: list[SceneAsk], critic: bool, language: str, settings: CharacterStatesSettings
) -> list[list[str]]:
    """Consecutive scenes grouped while their blocks fit `pack_tokens`, with stable boundaries."""
    costs = {a.item_id: count_tokens(scene_block(1, a, critic, language)) for a in asks}
    return stable_groups(
        ((a.item_id, a.key or a.item_id, (a.item_id,)) for a in asks),
        costs,
        settings.pack_tokens,
        settings.max_scenes_per_request,
    )


def round_values(
    asks: dict[str, SceneAsk], ids: list[str], critic: bool, language: str, title: str
) -> dict[str, str]:
    """Prompt values of one request: its scenes numbered 1..n in `ids` order."""
    scenes = "\n\n".join(scene_block(n, asks[i], critic, language) for n, i in enumerate(ids, 1))
    return {"scenes": scenes} if critic else {"document_title": title, "scenes": scenes}
