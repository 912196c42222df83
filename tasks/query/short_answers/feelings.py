"""The feeling a "How did X feel ...?" question asks for, offline: a word of feeling near the clause
that states the question's event, or the feeling a reaction shows ("wept" -> sad).

Feeling words are read in any of their forms ("angrily", "anger", "with delight") and answered as
the adjective. The search runs over the sentence stating the event (its clauses after the event
first) and the sentence after it, then over the other supporting sentences; a reaction ("began to
scream", "wept", "thanked") is read as the feeling it shows only when no feeling is named, and the
method says so. A small English lexicon, not fitted to any data set.
"""

from __future__ import annotations

import re

from tasks.query.short_answers.clauses import anchor_sentence, clauses, keys_of, predicate_keys

# word form -> the adjective answered
FEELING_FORMS = {
    **{
        w: w
        for w in """happy sad angry afraid frightened scared terrified delighted glad sorry ashamed surprised
astonished amazed grateful thankful jealous envious proud lonely worried anxious joyful furious pleased
miserable unhappy stupefied curious excited disappointed upset nervous hopeful relieved content contented
satisfied embarrassed confused puzzled annoyed shocked horrified sorrowful merry cheerful overjoyed uneasy
troubled distressed vexed eager heartbroken bewildered alarmed hurt calm dismayed frustrated startled
depressed guilty impatient sad displeased indignant fearful""".split()
    },
    "angrily": "angry",
    "anger": "angry",
    "wrath": "angry",
    "rage": "angry",
    "furiously": "furious",
    "fury": "furious",
    "indignantly": "indignant",
    "delight": "delighted",
    "joy": "joyful",
    "joyfully": "joyful",
    "happily": "happy",
    "happiness": "happy",
    "gladly": "glad",
    "gladness": "glad",
    "sadly": "sad",
    "sadness": "sad",
    "sorrow": "sad",
    "grief": "sad",
    "fear": "afraid",
    "terror": "terrified",
    "fright": "frightened",
    "surprise": "surprised",
    "astonishment": "astonished",
    "amazement": "amazed",
    "gratitude": "grateful",
    "jealousy": "jealous",
    "envy": "envious",
    "pride": "proud",
    "shame": "ashamed",
    "worry": "worried",
    "anxiety": "anxious",
    "pleasure": "pleased",
    "misery": "miserable",
    "curiosity": "curious",
    "excitement": "excited",
    "disappointment": "disappointed",
    "relief": "relieved",
    "embarrassment": "embarrassed",
    "confusion": "confused",
    "annoyance": "annoyed",
    "shock": "shocked",
    "horror": "horrified",
    "dismay": "dismayed",
    "frustration": "frustrated",
    "impatience": "impatient",
    "impatiently": "impatient",
    "cheerfully": "cheerful",
    "proudly": "proud",
    "eagerly": "eager",
}
# reactions that show a feeling without naming it
REACTIONS = {
    "scared": "scream screamed screaming shriek shrieked tremble trembled trembling fled flee shook shudder "
    "shuddered",
    "sad": "wept weep weeping cry cried crying sob sobbed sobbing tears sigh sighed",
    "happy": "laugh laughed laughing smile smiled smiling danced sang rejoiced",
    "angry": "scold scolded shout shouted cursed stamped",
    "grateful": "thank thanked thanks",
}
REACTION_FORMS = {form: feeling for feeling, forms in REACTIONS.items() for form in forms.split()}
FEEL_WORDS = frozenset({"feel", "felt", "feeling", "feels"})


def _named(text: str, question_words: set[str]) -> str | None:
    for word in re.findall(r"[a-z]+", text.lower()):
        if word in FEELING_FORMS and word not in question_words:
            return FEELING_FORMS[word]
    return None


def _shown(text: str) -> tuple[str, str] | None:
    for word in re.findall(r"[a-z]+", text.lower()):
        if word in REACTION_FORMS:
            return REACTION_FORMS[word], word
    return None


def feeling_answer(
    question: str, texts: list[tuple[str, str | None, str | None]]
) -> tuple[str, int, str] | None:
    """(feeling, index of the supporting sentence, method) from (sentence, before, after) triples."""
    question_words = set(re.findall(r"[a-z]+", question.lower()))
    keys = predicate_keys(question) - keys_of("feel felt feeling")
    found = anchor_sentence([t[0] for t in texts], keys) if keys else None
    order = list(range(len(texts)))
    places: list[tuple[int, str]] = []
    if found is not None:
        index, clause, _ = found
        sentence, _, after = texts[index]
        parts = clauses(sentence)
        places += [(index, " ".join(parts[clause:])), (index, sentence), (index, after or "")]
        order.remove(index)
    places += [(i, texts[i][0]) for i in order]
    for index, text in places:
        feeling = _named(text, question_words)
        if feeling:
            return feeling, index, "a word of feeling beside the question's event"
    for index, text in places[:3]:
        shown = _shown(text)
        if shown:
            return shown[0], index, f'the feeling a reaction shows ("{shown[1]}"), not named in the text'
    return None
