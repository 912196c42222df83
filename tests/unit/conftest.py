"""Short names for the agent fixtures (tests/fixtures/agent_fixtures.py) used by the query-agent
and LLM-finalizer tests."""

from __future__ import annotations

import pytest

from schemas.config import Settings
from tasks.query.tools.env import ToolEnv
from tests.fixtures.openai_server import FakeOpenAIServer


@pytest.fixture(scope="module")
def settings(agent_settings: Settings) -> Settings:
    return agent_settings


@pytest.fixture(scope="module")
def env(agent_env: ToolEnv) -> ToolEnv:
    return agent_env


@pytest.fixture
def server(agent_server: FakeOpenAIServer) -> FakeOpenAIServer:
    return agent_server
