"""Configuration of the LLM client (`[llm]`) and of the local llama.cpp server (`[local_llm]`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from schemas.config_section import Section, check_url


# Settings that no longer exist, with what to do instead: an old config naming one gets this
# one line instead of pydantic's "extra inputs are not permitted".
REMOVED_LLM_SETTINGS = {
    "guided_json_extra": "vLLM ignores guided_json since 0.12; response_format carries the schema",
}


class LLMEndpoint(Section):
    """One more server of the same model (`[[llm.endpoints]]`)."""

    url: str = Field(description="OpenAI-compatible base URL")
    concurrency: int | None = Field(
        None, ge=1, description="requests in flight at this server (its slots); default [llm] concurrency"
    )

    _url = field_validator("url")(classmethod(lambda cls, value: check_url(value)))


class LLMSettings(Section):
    url: str | None = Field(None, description="OpenAI-compatible base URL; None selects the embedded default")
    endpoints: list[LLMEndpoint] = Field(
        default_factory=list,
        description="more servers of the same model beside url, each with its own concurrency: each "
        "document's requests go to one server (its prefix cache stays warm) and move to the next when "
        "it stops answering (--llm-url given more than once fills this)",
    )
    model: str = "Qwen/Qwen3-30B-A3B-Instruct-2507"
    temperature: float = Field(0.0, ge=0, le=2)
    max_tokens: int = Field(
        2048, ge=16, description="reply limit of requests whose stage sets none (stages size theirs by input)"
    )
    max_tokens_retry: int = Field(
        4096, ge=16, description="the most the retry after finish_reason=length asks (twice the cut limit)"
    )
    context_tokens: int = Field(
        0, ge=0, description="prompt + reply tokens per request; 0 = as the server reports in /v1/models"
    )
    timeout_s: float = Field(
        120.0, gt=0, le=86_400, description="per-request timeout floor; raised to the server's measured speed"
    )
    deadline_s: float = Field(600.0, gt=0, le=86_400, description="per-call deadline across all attempts")
    max_retries: int = Field(4, ge=0)
    backoff_s: float = Field(1.0, ge=0, description="first backoff; doubles per retry, with jitter")
    concurrency: int = Field(16, ge=1, description="requests in flight")
    enable_thinking: bool = False
    stream: bool = Field(
        True,
        description="stream replies (except tool steps): a request is cut after timeout_s of silence, "
        "never because a slow server is still writing; deadline_s bounds it in all",
    )
    grammar: Literal["response_format", "llguidance"] = Field(
        "response_format",
        description="how a reply's JSON schema is sent: response_format (vLLM, any OpenAI-compatible "
        "server: string lengths and patterns left to validation) or llguidance (llama.cpp built with "
        "llguidance, as --local-llm starts: the whole schema as its grammar field, so string limits "
        "also stop a looping model while it writes)",
    )

    _url = field_validator("url")(classmethod(lambda cls, value: check_url(value)))

    @model_validator(mode="before")
    @classmethod
    def _removed(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name, why in REMOVED_LLM_SETTINGS.items():
                if name in data:
                    raise ValueError(f"[llm] {name} was removed ({why}): delete it from the config file")
        return data


class LocalLLMSettings(Section):
    """`nkw llm local`: llama.cpp's server on 127.0.0.1 with a GGUF model (see docs/local_model.md)."""

    model: str = Field("0.5b", description="pinned model: 0.5b, 1.5b or smollm2-135m (fetched and verified)")
    path: str | None = Field(None, description="any GGUF file to serve instead of the pinned model")
    context: int = Field(16384, ge=512, description="tokens per slot, prompt and reply together")
    parallel: int = Field(1, ge=1, le=16, description="slots: requests decoded at the same time")
    decode_threads: int = Field(
        1, ge=1, le=64, description="decode threads (more spin against other processes on a small machine)"
    )
    prompt_threads: int = Field(2, ge=1, le=64, description="prompt-processing threads")
    port: int = Field(0, ge=0, le=65535, description="0: a free port")
    startup_timeout_s: float = Field(
        180.0, gt=0, le=86_400, description="time allowed to load and answer /v1/models"
    )
