"""The two test tiers: `make test` runs everything not marked slow (a few minutes on two cores);
`make test-all` adds the slow tier: the attack and fault suites that start real processes and
builds, the Prefect flows and deployments, the documented operations run as printed, and corpus
sizes. Whole folders and modules are declared here, once, and marked by tests/conftest.py; a test
that is slow on its own carries `@pytest.mark.slow` itself. CI runs both tiers."""

from __future__ import annotations

SLOW_FOLDERS = (
    "tests/faults/",  # attack and fault suites: builds killed, servers stopped, processes interrupted
)
SLOW_MODULES = (
    "tests/security/test_attack_serve.py",  # the real server under connection floods
    "tests/security/test_attack_sql.py",  # memory ceilings and timeouts in real processes
    "tests/security/test_attack_workspace_links.py",  # a build per planted link
    "tests/security/test_fuzz_cli.py",  # every command in fresh processes, a few minutes
    "tests/flows/test_build_corpus.py",  # builds under a Prefect server, a kill and a resume
    "tests/flows/test_stage_concurrency.py",  # Prefect task runs from worker threads
    "tests/flows/test_process_runner.py",  # worker processes
    "tests/flows/test_corpus_scale.py",  # a megabyte corpus, 1,500 questions, a Dask cluster
    "tests/flows/test_ablate_and_report.py",  # the ablation grid as a Prefect flow
    "tests/flows/test_ablate_llm.py",
    "tests/flows/test_operations_doc.py",  # docs/operations.md run as printed
    "tests/flows/test_readme_quickstart.py",  # the README's first commands run as printed
    "tests/flows/test_deployments.py",
    "tests/flows/test_deployments_run.py",
    "tests/flows/test_deployment_fallback.py",
    "tests/flows/test_prefect_artifacts.py",  # artifacts read back from a Prefect test server
    "tests/flows/test_prefect_modes.py",  # a running server reused; a temporary one's labelled wait
)
SLOW_TESTS = (
    # two fresh processes importing Prefect (13 s)
    "tests/unit/flows/test_progress.py::test_the_cli_configures_prefect_before_importing_it",
)


def is_slow(nodeid: str) -> bool:
    """Whether the test with this pytest node id (path::name[params]) belongs to the slow tier."""
    path, _, name = nodeid.partition("::")
    return (
        path.startswith(SLOW_FOLDERS)
        or path in SLOW_MODULES
        or f"{path}::{name.split('[', 1)[0]}" in SLOW_TESTS
    )
