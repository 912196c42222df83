"""The fixed question budget of an evaluation or ablation run (`--limit N`).

N questions of a file are taken in turn from each document (a document's questions in file
order), so a budget smaller than the file still reaches every document it can: with 3
screenplays and `--limit 9`, each answers 3. The chosen questions keep their file order."""

from __future__ import annotations

from tasks.evaluate.metrics import Question


def question_budget(questions: list[Question], limit: int | None) -> list[Question]:
    if limit is None or limit >= len(questions):
        return list(questions)
    by_doc: dict[str, list[int]] = {}
    for index, question in enumerate(questions):
        by_doc.setdefault(question.doc_id, []).append(index)
    chosen: list[int] = []
    depth = 0
    while len(chosen) < limit:
        for indices in by_doc.values():
            if depth < len(indices) and len(chosen) < limit:
                chosen.append(indices[depth])
        depth += 1
    return [questions[i] for i in sorted(chosen)]
