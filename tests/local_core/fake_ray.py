"""A stand-in for the slice of Ray that :class:`judgekit.local.ray_backend.RayBackend` uses, in
this process, for fast tests of its scheduling: nodes with CPUs, actors placed on a node with room
(or pinned to one), queued while none has, killed alone or with their node.

Each actor is the backend's real actor class (``_actor_class()``) run in-process, with the fake
worker's in-process core (``fake_worker:FakeCore``); its ``ready`` answer is composed here (where
real Ray asks the runtime context) with the class's own store probe, run on the store as the
actor's node sees it: a node made with ``store=OTHER_DIR`` sees another folder at the store's path.

    cluster = FakeRay()
    a = cluster.add_node(cpus=1)
    backend._ray = cluster          # start() then joins this instead of Ray
    cluster.kill_node(a)            # its actors die as with a lost node
"""

from __future__ import annotations

import asyncio
import itertools
from types import SimpleNamespace
from typing import Any


class RayError(Exception):
    pass


class RayActorError(RayError):
    pass


class ActorDiedError(RayActorError):
    pass


class WorkerCrashedError(RayError):
    pass


class ObjectLostError(RayError):
    pass


class RayTaskError(RayError):
    pass


class RuntimeEnvSetupError(RayError):
    pass


_END = object()


class _Node:
    def __init__(self, node_id: str, cpus: float, gpus: float, store: str | None) -> None:
        self.node_id, self.cpus, self.gpus, self.store = node_id, cpus, gpus, store
        self.alive = True
        self.actors: list[FakeActor] = []

    def free_cpus(self) -> float:
        return self.cpus - sum(a.cpus for a in self.actors if a.dead is None)


class _Method:
    def __init__(self, fn) -> None:
        self.fn = fn

    def remote(self, *args):
        return asyncio.ensure_future(self.fn(*args))


class _Stream:
    def __init__(self, actor: "FakeActor") -> None:
        self.actor = actor

    def options(self, **_kw) -> "_Stream":
        return self

    def remote(self, batch: dict):
        return self.actor._stream(batch)


class FakeActor:
    def __init__(self, ray: "FakeRay", cls, options: dict[str, Any], args: tuple) -> None:
        self.ray = ray
        self.obj = cls(*args)
        self.cpus = float(options.get("num_cpus", 1))
        strategy = options.get("scheduling_strategy")
        self.pinned = getattr(strategy, "node_id", None)
        self.node: _Node | None = None
        self.dead: BaseException | None = None
        loop = asyncio.get_running_loop()
        self.placed = loop.create_future()
        self.died = loop.create_future()
        self.ready = _Method(self._ready)
        self.hello = _Method(self._hello)
        self.run_batch = _Stream(self)

    def die(self, error: BaseException) -> None:
        if self.dead is not None:
            return
        self.dead = error
        for fut in (self.placed, self.died):
            if not fut.done():
                fut.set_exception(error)
                fut.exception()  # retrieved: no "never retrieved" warning when nobody waits

    async def _until_placed(self) -> _Node:
        await asyncio.shield(self.placed)
        assert self.node is not None
        return self.node

    async def _ready(self, probe_name: str, token: str) -> dict:
        node = await self._until_placed()
        me = f"{node.node_id[:12]}-{id(self) % 100000}"
        store = node.store or self.obj.args[1]
        problem = await asyncio.to_thread(type(self.obj).probe_store, store, probe_name, token, me)
        if self.dead is not None:
            raise self.dead
        return {"node_id": node.node_id, "host": "fakehost", "ip": "", "pid": id(self) % 100000,
                "probe_file": f"{probe_name}.{me}", "me": me, "store_problem": problem}

    async def _hello(self) -> dict:
        await self._until_placed()
        hello = await asyncio.to_thread(self.obj.hello)
        if self.dead is not None:
            raise self.dead
        return hello

    async def _stream(self, batch: dict):
        if self.dead is not None:
            raise self.dead
        it = self.obj.run_batch(batch)
        while True:
            step = asyncio.ensure_future(asyncio.to_thread(next, it, _END))
            done, _ = await asyncio.wait({step, self.died}, return_when=asyncio.FIRST_COMPLETED)
            if self.dead is not None:
                step.cancel()
                raise self.dead
            try:
                got = step.result()
            except Exception as e:
                raise RayTaskError(str(e)) from None
            if got is _END:
                return
            fut = asyncio.get_running_loop().create_future()
            fut.set_result(got)
            yield fut


class _RemoteClass:
    def __init__(self, ray: "FakeRay", cls) -> None:
        self.ray, self.cls, self._options = ray, cls, {}

    def options(self, **kw) -> "_RemoteClass":
        made = _RemoteClass(self.ray, self.cls)
        made._options = kw
        return made

    def remote(self, *args) -> FakeActor:
        actor = FakeActor(self.ray, self.cls, self._options, args)
        self.ray.pending.append(actor)
        self.ray.place()
        return actor


class FakeRay:
    exceptions = SimpleNamespace(RayError=RayError, RayActorError=RayActorError, ActorDiedError=ActorDiedError,
                                 WorkerCrashedError=WorkerCrashedError, ObjectLostError=ObjectLostError,
                                 RayTaskError=RayTaskError, RuntimeEnvSetupError=RuntimeEnvSetupError)

    def __init__(self) -> None:
        self.node_list: list[_Node] = []
        self.pending: list[FakeActor] = []
        self._ids = itertools.count(1)

    # -- the cluster --------------------------------------------------------------------------
    def add_node(self, cpus: float = 1, gpus: float = 0, store: str | None = None) -> str:
        node_id = f"{next(self._ids):02d}" + "ab" * 27
        self.node_list.append(_Node(node_id, cpus, gpus, store))
        self.place()
        return node_id

    def node(self, node_id: str) -> _Node:
        return next(n for n in self.node_list if n.node_id == node_id)

    def kill_node(self, node_id: str) -> None:
        node = self.node(node_id)
        node.alive = False
        for actor in node.actors:
            actor.die(ActorDiedError(f"The actor died because its node has died. Node Id: {node_id}"))
        for actor in list(self.pending):
            if actor.pinned == node_id:
                self.pending.remove(actor)
                actor.die(ActorDiedError(f"the node {node_id} it was pinned to is dead"))
        self.place()

    def place(self) -> None:
        for actor in list(self.pending):
            if actor.dead is not None:
                self.pending.remove(actor)
                continue
            for node in self.node_list:
                if node.alive and node.free_cpus() >= actor.cpus and actor.pinned in (None, node.node_id):
                    self.pending.remove(actor)
                    node.actors.append(actor)
                    actor.node = node
                    actor.placed.set_result(None)
                    break

    # -- what the backend calls ---------------------------------------------------------------
    def is_initialized(self) -> bool:
        return True

    def remote(self, cls) -> _RemoteClass:
        return _RemoteClass(self, cls)

    def kill(self, actor: FakeActor, no_restart: bool = True) -> None:
        actor.die(ActorDiedError("The actor was killed by ray.kill"))
        self.place()

    def nodes(self) -> list[dict]:
        return [{"NodeID": n.node_id, "Alive": n.alive, "Resources": {"CPU": n.cpus, "GPU": n.gpus}}
                for n in self.node_list]

    def cluster_resources(self) -> dict[str, float]:
        alive = [n for n in self.node_list if n.alive]
        out = {"CPU": float(sum(n.cpus for n in alive))}
        if any(n.gpus for n in alive):
            out["GPU"] = float(sum(n.gpus for n in alive))
        return out

    def available_resources(self) -> dict[str, float]:
        return {"CPU": float(sum(n.free_cpus() for n in self.node_list if n.alive))}

    def shutdown(self) -> None:
        pass
