"""Local work on a real two-raylet Ray cluster (issue 29): a lost node, a full cluster, a node
that cannot see the store, and the same bits on Ray as in a subprocess.

The cluster runs on this machine: a head (``ray start --head --num-cpus 1``) and a second raylet
joined to it (``ray start --address ... --num-cpus 1``), each in its own process group.  The
work is the real worker (``judgekit_local``) drawing with the tiny random-weight Stable
Diffusion of ``judgekit_local.testing`` on the CPU (``--size`` px, ``--steps`` steps), through
``Batcher`` + ``RayBackend`` with ``batch_size = 1``, every item submitted at once, as the
engine does.  The cluster has Ray's token authentication on (``RAY_AUTH_MODE=token``, the
token in ``~/.ray/auth_token``: Ray 2.59+ turns it on for a head started here anyway).  In order:

0. **a join without the token**: a driver without ``RAY_AUTH_MODE=token`` (another process)
   asks judgekit to join: the time until its one-line error, and the line;
1. **undisturbed**: 2 actors (one per node: the cluster is full), a warm-up item each, then
   ``--items`` items timed;
2. **same bits**: the same items through ``SubprocessBackend`` (torch threads = ``cpus_per_worker``
   = 1, the default on both): images byte-identical?  And with 2 threads in the subprocess, for
   contrast (may or may not differ on a model this small);
3. **three actors asked of two CPUs**: a second backend of 1 actor while the first holds both
   CPUs: the time until its one-line error, and the line;
4. **a node killed mid-run**: the same items again; once a third are done the second raylet's
   process group is killed (SIGKILL).  The run must finish on the survivor in under twice the
   undisturbed time; the status lines right after the kill and the faults record;
5. **a node that cannot see the store**: the second raylet is started again in its own mount
   namespace (``unshare -m``) with an empty folder mounted over the store's path; a backend of 2
   actors: the node refused by name (time until refused), the run served by the head's actor.

Everything started here is stopped at the end, also on failure.  Prints the figures; asserts
none.  Needs ray (``pip install 'judgekit[ray]'``), judgekit-local with diffusers, and
``unshare`` (Linux, root or user namespaces) for step 5 (skipped without it).

    .venv/bin/python perf/ray_cluster.py [--items 48] [--size 64] [--steps 16]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.pop("RAY_ADDRESS", None)
os.environ["RAY_AUTH_MODE"] = "token"  # for this driver and the nodes started here

from judgekit.blobs import BlobStore  # noqa: E402
from judgekit.local import Batcher, SubprocessBackend, WorkerStartError  # noqa: E402
from judgekit.local.ray_backend import RayBackend  # noqa: E402

WORKER = [sys.executable, "-m", "judgekit_local"]
RAY = str(Path(sys.executable).with_name("ray"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """The head and the second raylet as process groups of ours."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen] = []
        self.node2: subprocess.Popen | None = None

    def _start(self, args: list[str], log: str, wrap: list[str] | None = None) -> subprocess.Popen:
        env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
        cmd = [*(wrap or []), *args]
        proc = subprocess.Popen(cmd, stdout=open(self.root / log, "w"), stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
        self.procs.append(proc)
        return proc

    def start_head(self) -> None:
        self._start([RAY, "start", "--head", "--port", str(self.port), "--num-cpus", "1", "--include-dashboard",
                     "false", "--temp-dir", str(self.root / "ray-head"), "--block"], "head.log")

    def start_node2(self, blind_store: tuple[str, str] | None = None) -> None:
        args = [RAY, "start", "--address", self.address, "--num-cpus", "1", "--block"]
        if blind_store is None:
            self.node2 = self._start(args, "node2.log")
            return
        empty, store = blind_store
        script = f"mount --bind {empty} {store} && exec " + " ".join(args)
        self.node2 = self._start(["sh", "-c", script], "node2-blind.log", wrap=["unshare", "-m"])

    def kill_node2(self) -> None:
        """SIGKILL the second node: its ``ray start``, raylet and every process they started
        (the actors' workers start sessions of their own, so the process group is not enough)."""
        if self.node2 is None or self.node2.poll() is not None:
            return
        tree = descendants(self.node2.pid)
        for pid in [self.node2.pid, *tree]:
            try:
                os.kill(pid, signal.SIGSTOP)  # nothing restarts what is killed next
            except ProcessLookupError:
                pass
        for pid in [self.node2.pid, *tree]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.node2.wait()
        self.node2_tree = tree

    def stop(self) -> None:
        for proc in self.procs:  # what they started in sessions of its own (actors' workers)
            for pid in descendants(proc.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for proc in reversed(self.procs):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                    proc.wait(15)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


JOIN = """
import asyncio, sys, time
from judgekit.local.ray_backend import RayBackend
async def main():
    backend = RayBackend(store=sys.argv[2], address=sys.argv[1])
    t = time.perf_counter()
    try:
        await backend.start()
        print("joined")
    except Exception as e:
        print(f"after {time.perf_counter() - t:.1f} s: {type(e).__name__}: {e}")
    finally:
        await backend.close()
asyncio.run(main())
"""


def join_without_token(address: str, store: Path, timeout: float) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")}
    try:
        out = subprocess.run([sys.executable, "-c", JOIN, address, str(store)], env=env, capture_output=True,
                             text=True, timeout=timeout, start_new_session=True)
    except subprocess.TimeoutExpired:
        return f"no answer within {timeout:g} s"
    lines = [line for line in out.stdout.splitlines() if line.strip()]
    return lines[-1] if lines else f"(nothing printed; exit {out.returncode}; stderr {out.stderr[-500:]!r})"


def descendants(root: int) -> list[int]:
    """Every process below ``root``, from /proc's parent links."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def alive_nodes(ray) -> list[dict]:
    return [n for n in ray.nodes() if n.get("Alive")]


async def wait_nodes(ray, n: int, timeout: float = 180) -> None:
    t0 = time.monotonic()
    while len(alive_nodes(ray)) != n:
        if time.monotonic() - t0 > timeout:
            raise RuntimeError(f"{len(alive_nodes(ray))} Ray nodes alive after {timeout} s, wanted {n}")
        await asyncio.sleep(0.5)


def items(n: int, offset: int = 0) -> list[dict]:
    return [{"prompt": f"a photo of object {k}", "seed": 1000 + k, "negative_prompt": None}
            for k in range(offset, offset + n)]


async def draw(batcher: Batcher, model: dict, params: dict, inputs: list[dict]) -> tuple[float, list[str]]:
    t0 = time.perf_counter()
    outs = await asyncio.gather(*[batcher.submit("text_to_image", model, params, inp) for inp in inputs])
    return time.perf_counter() - t0, [o["image"]["sha256"] for o in outs]


async def main(args: argparse.Namespace) -> None:
    import ray

    from judgekit_local.testing import build_tiny_diffusion

    root = Path(tempfile.mkdtemp(prefix="jk-ray-cluster-"))
    store = root / "blobs"
    store.mkdir()
    BlobStore(store)
    model = {"id": str(build_tiny_diffusion(root / "tiny-sd")), "revision": None, "dtype": "fp32",
             "trust_remote_code": False, "pipeline": "auto"}
    params = {"steps": args.steps, "guidance": 5.0, "width": args.size, "height": args.size}
    cluster = Cluster(root)
    backends: list = []
    try:
        cluster.start_head()
        t0 = time.monotonic()
        while True:  # the head is up when a driver can join it
            try:
                ray.init(address=cluster.address, log_to_driver=False, logging_level="WARNING")
                break
            except Exception:
                if time.monotonic() - t0 > 120:
                    raise
                await asyncio.sleep(1)
        print(f"0. a join without the token: {join_without_token(cluster.address, store, args.join_timeout)}")
        cluster.start_node2()
        await wait_nodes(ray, 2)
        print(f"cluster: {len(alive_nodes(ray))} nodes, {ray.cluster_resources().get('CPU'):g} CPUs, ray "
              f"{ray.__version__}; {args.items} items of {args.size} px, {args.steps} steps, batch_size 1")

        # 1. undisturbed
        gen = RayBackend(WORKER, store=store, workers=2, label="gen actor", place_timeout_s=120,
                         start_timeout_s=240, no_worker_timeout_s=120)
        backends.append(gen)
        batcher = Batcher(gen, batch_size=1, max_wait_ms=0)
        t = time.monotonic()
        await gen.start()
        print(f"\n1. two actors started in {time.monotonic() - t:.1f} s on "
              f"{len({s.node_id for s in gen._slots})} nodes: " + " | ".join(gen.status()))
        await draw(batcher, model, params, items(2, offset=500))  # warm-up: each actor loads the model
        undisturbed, ray_shas = await draw(batcher, model, params, items(args.items))
        print(f"   undisturbed: {args.items} items in {undisturbed:.2f} s")

        # 2. same bits
        for threads in (1, 2):
            sub = SubprocessBackend(WORKER, store=store, device="cpu", threads=threads)
            sub_batcher = Batcher(sub, batch_size=1, max_wait_ms=0)
            try:
                _, sub_shas = await draw(sub_batcher, model, params, items(args.items))
            finally:
                await sub_batcher.close()
                await sub.close()
            same = sum(a == b for a, b in zip(ray_shas, sub_shas))
            label = "the default (1 thread on both)" if threads == 1 else "subprocess with 2 threads (contrast)"
            print(f"2. Ray vs subprocess, {label}: {same} of {args.items} images byte-identical")

        # 3. three actors asked of two CPUs
        enc = RayBackend(WORKER, store=store, workers=1, label="enc actor")
        t = time.perf_counter()
        try:
            await enc.start()
            print("3. UNEXPECTED: the third actor was placed")
        except WorkerStartError as e:
            print(f"3. three actors asked of two CPUs: one line after {time.perf_counter() - t:.3f} s:\n   {e}")
        finally:
            await enc.close()

        # 4. a node killed mid-run
        calls = [asyncio.ensure_future(batcher.submit("text_to_image", model, params, inp))
                 for inp in items(args.items)]
        t = time.perf_counter()
        done0 = batcher.items_done
        while batcher.items_done - done0 < args.items // 3:
            await asyncio.sleep(0.02)
        cluster.kill_node2()
        killed_at = time.perf_counter() - t
        await asyncio.sleep(3)
        lines = gen.status()
        outs = await asyncio.gather(*calls, return_exceptions=True)
        disturbed = time.perf_counter() - t
        ok = sum(isinstance(o, dict) for o in outs)
        print(f"4. node 2 killed after {killed_at:.2f} s ({args.items // 3} items done): {ok} of {args.items} items "
              f"finished in {disturbed:.2f} s = {disturbed / undisturbed:.2f} x the undisturbed {undisturbed:.2f} s")
        print("   status 3 s after the kill:\n     " + "\n     ".join(lines))
        t = time.perf_counter()
        while not gen.lost_nodes and time.perf_counter() - t < 90:  # Ray marks it dead once heartbeats are missed
            await asyncio.sleep(0.5)
        print(f"   node counted lost {disturbed - killed_at + time.perf_counter() - t:.0f} s after the kill "
              f"(when Ray marked it dead): {sorted(gen.lost_nodes.values())}")
        print(f"   faults: {batcher.faults()}")
        await batcher.close()
        await gen.close()
        backends.remove(gen)

        # 5. a node that cannot see the store
        if shutil.which("unshare") is None:
            print("5. skipped: no unshare")
            return
        await wait_nodes(ray, 1)
        empty = root / "empty"
        empty.mkdir()
        cluster.start_node2(blind_store=(str(empty), str(store)))
        await wait_nodes(ray, 2)
        blind = RayBackend(WORKER, store=store, workers=2, label="blind actor", place_timeout_s=30,
                           start_timeout_s=240)
        backends.append(blind)
        t = time.perf_counter()
        starting = asyncio.ensure_future(blind.start())
        while not blind.refused_nodes and not starting.done():
            await asyncio.sleep(0.05)
        refused_after = time.perf_counter() - t
        try:
            await starting
            b2 = Batcher(blind, batch_size=1, max_wait_ms=0)
            took, _ = await draw(b2, model, params, items(4))
            served = f"then 4 items drawn by {blind.live} live actor in {took:.1f} s"
            await b2.close()
        except WorkerStartError as e:
            served = f"start failed: {e}"
        print(f"5. refused after {refused_after:.1f} s: {sorted(blind.refused_nodes.values())}; {served}")
        for note in blind.notes:
            print(f"   note: {note}")
    finally:
        for b in backends:
            try:
                await b.close()
            except Exception as e:
                print(f"closing a backend: {e!r}")
        if ray.is_initialized():
            ray.shutdown()
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=48)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--steps", type=int, default=16)
    ap.add_argument("--join-timeout", type=float, default=120, help="step 0's limit (seconds)")
    asyncio.run(main(ap.parse_args()))
