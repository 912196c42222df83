"""Every Prefect flow, and every task a flow submits, takes references only: paths, doc ids,
hashes, settings and plain options, never documents, questions, engines or clients."""

from __future__ import annotations

import inspect

from prefect import Flow
from prefect.tasks import Task

from flows import ablate_flow, build_corpus, evaluate_benchmark

ALLOWED = {
    "str",
    "int",
    "bool",
    "str | None",
    "int | None",
    "list[str]",
    "list[str] | None",
    "dict[str, Any]",
}
# Stage task runs are nested inside `build_document` and run in its process; they get the
# document's reference too (flows.build.runner.Document), but also the in-process clients.
NESTED = {"run_stage"}


def _prefect_objects():
    for module in (build_corpus, evaluate_benchmark, ablate_flow):
        for name, value in vars(module).items():
            if isinstance(value, (Flow, Task)) and value.name not in NESTED:
                yield f"{module.__name__}.{name}", value


def test_flow_and_task_parameters_are_references():
    seen = dict(_prefect_objects())
    assert {
        "build_documents_flow",
        "build_document",
        "answer_documents_flow",
        "answer_document_task",
        "build_corpus",
        "evaluate_benchmark",
        "ablate_flow",
        "prepare_variant_task",
        "answer_setting_task",
    } <= {key.rsplit(".", 1)[1] for key in seen}
    for key, value in seen.items():
        for parameter in inspect.signature(value.fn).parameters.values():
            assert str(parameter.annotation) in ALLOWED, f"{key}({parameter.name}: {parameter.annotation})"
