"""Azure OpenAI: the deployment URL and api-version the SDK builds, over real HTTP."""

from aiohttp import web

from judgekit.config import ModelSpec
from judgekit.providers import create_provider
from judgekit.types import ChatRequest, GenParams, Message


async def test_azure_routes_to_the_deployment(monkeypatch):
    seen = []

    async def handler(request):
        body = await request.json()
        seen.append((str(request.rel_url), request.headers.get("api-key"), body["model"]))
        return web.json_response({
            "id": "chatcmpl-1", "object": "chat.completion", "model": body["model"], "created": 0,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}})

    app = web.Application()
    app.router.add_route("POST", "/{tail:.*}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    monkeypatch.setenv("JK_AZURE_KEY", "secret")
    spec = ModelSpec(provider="azure", model="my-deployment", base_url=f"http://127.0.0.1:{port}",
                     api_version="2024-10-21", api_key_env="JK_AZURE_KEY")
    prov = create_provider("az", spec)
    await prov.start()
    r = await prov.generate(ChatRequest("az", (Message.user("hi"),), GenParams(max_tokens=5)))
    await prov.close()
    await runner.cleanup()
    assert r.text == "hello" and r.usage.input_tokens == 3 and r.finish_reason == "stop"
    assert seen == [("/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21", "secret",
                     "my-deployment")]
