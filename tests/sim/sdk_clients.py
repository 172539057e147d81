"""The official SDKs' clients pointed at a simulator, for the real-shape tests; every OpenAI client
made here is closed after its test by the autouse fixture in conftest.py."""

from __future__ import annotations

import openai
from google import genai

OPEN: list[openai.AsyncOpenAI] = []


def oa(server, key: str = "k", max_retries: int = 0) -> openai.AsyncOpenAI:
    c = openai.AsyncOpenAI(base_url=server.base_url, api_key=key, max_retries=max_retries)
    OPEN.append(c)
    return c


def azure(server, key: str = "k", deployment: str | None = None) -> openai.AsyncAzureOpenAI:
    c = openai.AsyncAzureOpenAI(azure_endpoint=server.root_url, api_key=key, api_version="2024-10-21",
                                azure_deployment=deployment, max_retries=0)
    OPEN.append(c)
    return c


def gm(server, key: str = "k") -> genai.Client:
    return genai.Client(api_key=key, http_options=genai.types.HttpOptions(base_url=server.root_url))
