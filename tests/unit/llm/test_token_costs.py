"""What LLM calls cost per source token: billed prompt tokens, prompt tokens the server computed
(billed less its prefix cache; a server that did not say counts in full) and completion tokens."""

from __future__ import annotations

import pandas as pd

from tasks.llm.client.token_costs import computed_prompt_tokens, tokens_per_source


def _calls() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "status": ["ok", "ok", "timeout", "cached"],
            "prompt_tokens": [1000, 1000, None, 0],
            "cached_prompt_tokens": [0, 800, None, 0],  # the second found the instructions cached
            "completion_tokens": [200, 100, None, 0],
        }
    )


def test_computed_prompt_tokens_are_billed_less_cached_and_unknown_counts_in_full() -> None:
    calls = _calls()
    assert computed_prompt_tokens(calls) == 1000 + 200
    calls.loc[1, "cached_prompt_tokens"] = None  # the server did not say: all 1,000 computed
    assert computed_prompt_tokens(calls) == 2000
    assert computed_prompt_tokens(calls.drop(columns="cached_prompt_tokens")) == 2000
    assert computed_prompt_tokens(calls.iloc[:0]) == 0


def test_costs_per_source_token() -> None:
    costs = tokens_per_source(_calls(), source_tokens=400)
    assert costs == {
        "source_tokens": 400,
        "requests": 3,  # the reply from NKW's own cache was not sent
        "cache_reported": 2,  # the timed-out attempt has no usage
        "prompt_per_source": 5.0,
        "computed_per_source": 3.0,
        "completion_per_source": 0.75,
    }
    assert tokens_per_source(_calls(), source_tokens=0)["prompt_per_source"] is None  # nothing read
