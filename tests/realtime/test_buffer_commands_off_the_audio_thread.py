"""Buffer commands whose work can be large (reading and writing files into existing buffers,
/b_gen, /b_zero) and /d_free, /d_freeAll do that work on the control thread, as scsynth's
stage 2 does: the audio thread only swaps prepared storage in at a block boundary. Under the
counting allocator the audio thread makes no system-heap operation while serving them, and
with MAGNETAR_RT_GUARD=1 no system call outside the allow-list either."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile

from rtcheck import SAMPLE_RATE, load_defs, rt_stats, sine_def
from rtserver import OscClient

ALL_PERIODS, ALL_HEAP_OPS, GUARD = 3, 4, -1  # GUARD: guardedSyscalls, always the last value
# Large enough that a copy of it could never come from the real-time pool.
FRAMES = 1 << 20


def read_write(client: OscClient, tmp) -> None:
    path = str(tmp / "noise.wav")
    soundfile.write(path, np.random.default_rng(1).uniform(-1, 1, FRAMES // 2).astype(np.float32),
                    SAMPLE_RATE, subtype="FLOAT")
    client.request(("/b_alloc", 0, FRAMES, 1), "/done", timeout=5)
    for i, command in enumerate(("/b_read", "/b_readChannel")):
        client.send((command, 0, path, 0, -1, i * 1000, 0))
        client.wait_for("/done", predicate=lambda m, c=command: m.contents[0] == c, timeout=10)
    client.send(("/b_write", 0, str(tmp / "out.wav"), "wav", "float"))
    client.wait_for("/done", predicate=lambda m: m.contents[0] == "/b_write", timeout=10)
    assert soundfile.info(str(tmp / "out.wav")).frames == FRAMES


def gen_zero(client: OscClient, tmp) -> None:
    client.request(("/b_alloc", 0, FRAMES, 1), "/done", timeout=5)
    client.request(("/b_alloc", 1, 2048, 1), "/done", timeout=5)
    client.send(("/b_gen", 0, "sine1", 7, 1.0, 0.5, 0.25))
    client.wait_for("/done", predicate=lambda m: m.contents[0] == "/b_gen", timeout=10)
    client.send(("/b_gen", 1, "sine1", 7, 1.0))
    client.wait_for("/done", predicate=lambda m: m.contents[0] == "/b_gen", timeout=10)
    client.request(("/b_alloc", 2, 4096, 1), "/done", timeout=5)
    client.send(("/b_gen", 2, "PreparePartConv", 1, 1024))
    client.wait_for("/done", predicate=lambda m: m.contents[0] == "/b_gen", timeout=10)
    client.send(("/b_zero", 0))
    client.wait_for("/done", predicate=lambda m: m.contents[0] == "/b_zero", timeout=10)
    assert client.request(("/b_get", 0, 100), "/b_set").contents[2] == 0.0


def def_free(client: OscClient, tmp) -> None:
    for _ in range(20):
        load_defs(client, sine_def())
        client.send(("/d_free", "rt_sine"))
        client.sync()
        load_defs(client, sine_def())
        client.send(("/d_freeAll",))
        client.sync()


@pytest.mark.parametrize("guard", ["off", "guard"])
@pytest.mark.parametrize("commands", [read_write, gen_zero, def_free], ids=lambda f: f.__name__)
def test_heavy_commands_leave_the_audio_thread_alone(driver, magnetar, tmp_path, commands, guard):
    env = {"MAGNETAR_RT_GUARD": "1"} if guard == "guard" else None
    server = magnetar(period=256, env=env)
    client = OscClient(server.port)
    try:
        client.request(("/notify", 1), "/done", timeout=3)
        client.sync()
        before = rt_stats(server.port)
        commands(client, tmp_path)
        client.sync()
        after = rt_stats(server.port)
    finally:
        client.close()
    periods = after.field(ALL_PERIODS) - before.field(ALL_PERIODS)
    heap_ops = after.field(ALL_HEAP_OPS) - before.field(ALL_HEAP_OPS)
    assert periods > 0, "the audio thread ran"
    assert heap_ops == 0, f"the audio thread made {heap_ops} system-heap operations serving {commands.__name__}"
    if guard == "guard":
        caught = after.field(GUARD) - before.field(GUARD)
        assert caught == 0, f"the guard caught {caught} system calls on the audio thread:\n{server.output[-2000:]}"
