"""Per-option evidence scoring: each option retrieves its own sentences, shared and question terms
do not count, option length cancels, a negation clash is a contradiction, EXCEPT takes the least
supported option, and every record carries its evidence and verdict."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tasks.query.options.option_evidence import SentenceTerms, choose, distinctive_terms, score_options

TEXTS = [
    "The fisherman sat on the shore with his line in the water.",
    "The fisherman caught a flounder that could talk.",
    "His wife lived in a miserable hovel by the sea.",
    "A ring was lost long ago in the town far away.",
    "The fisherman did not catch any boot that day.",
]


def frame(texts: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"text": texts, "section_id": [f"s{i}" for i in range(len(texts))]})


def score(question: str, options: list[str]):
    sentences = frame(TEXTS)
    return score_options(
        question, options, sentences, np.zeros((len(TEXTS), 1)), SentenceTerms.build(sentences), None
    )


def test_each_option_gets_its_own_evidence_and_the_supported_one_wins():
    options = ["A golden ring", "A talking flounder", "A long, heavy and very old leather boot from the sea"]
    records = score("What did the fisherman catch?", options)
    chosen, note = choose(records)
    assert chosen == 1 and note.startswith("chose B (best supported")
    assert records[1].evidence[0] == 1 and records[1].verdict == "direct_support"
    # "ring" occurs only in a sentence without the question's terms: no support, not an answer
    assert records[0].score == 0 and records[0].verdict == "insufficient"
    assert [r.option_index for r in records] == [0, 1, 2] and all(r.reason for r in records)


def test_shared_and_question_terms_do_not_count():
    found = distinctive_terms(
        "What did the fisherman catch?", ["a fisherman's flounder", "a fisherman's boot"]
    )
    assert found == [{"flounder"}, {"boot"}]


def test_negation_clash_is_a_contradiction_and_exception_takes_the_least_supported():
    records = score("What did the fisherman catch?", ["A boot", "A flounder"])
    assert records[0].verdict == "contradiction"  # "did not catch any boot"
    assert choose(records)[0] == 1
    assert choose(records, exception=True)[0] == 0


def test_no_sentences_means_insufficient():
    empty = frame([])
    records = score_options("Who?", ["A", "B"], empty, np.zeros((0, 1)), SentenceTerms.build(empty), None)
    assert [r.verdict for r in records] == ["insufficient", "insufficient"]
