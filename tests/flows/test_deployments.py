"""Every deployment entrypoint in deployments/prefect.yaml resolves to a Prefect flow whose
parameters match the ones the deployment passes."""

from __future__ import annotations

import inspect
from pathlib import Path

import yaml

from schemas.config import load_settings
from tests.conftest import REPO


def _deployments() -> list[dict]:
    return yaml.safe_load((REPO / "deployments" / "prefect.yaml").read_text())["deployments"]


def test_entrypoints_resolve_to_flows_with_matching_parameters():
    from prefect.flows import load_flow_from_entrypoint

    deployments = _deployments()
    assert {d["name"] for d in deployments} == {"nightly-corpus-rebuild", "benchmark-evaluation"}
    for deployment in deployments:
        flow = load_flow_from_entrypoint(str(REPO / deployment["entrypoint"]))
        accepted = set(inspect.signature(flow.fn).parameters)
        assert set(deployment["parameters"]) <= accepted, deployment["name"]


def test_rebuild_is_scheduled_and_config_files_load():
    rebuild = next(d for d in _deployments() if d["name"] == "nightly-corpus-rebuild")
    assert rebuild["schedules"][0]["cron"].count(" ") == 4
    for deployment in _deployments():
        config = deployment["parameters"].get("config")
        if config:
            settings = load_settings(REPO / config)
            assert settings.build.concurrency >= 1
            assert Path(REPO / config).is_file()
