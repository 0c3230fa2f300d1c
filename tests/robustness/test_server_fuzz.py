"""The server-level fuzzer (server_fuzz.py) for a few seconds on each driver:
mutated real sessions from four UDP and TCP clients at once, and after every
burst the server answers /status and /sync, the synth started first still
plays, and nodes and real-time memory are back at their baseline."""

from __future__ import annotations

from rtcheck import quit_server
from server_fuzz import ServerFuzz, boot


def test_mutated_sessions_from_several_clients_leave_the_server_serving(driver):
    server, tcp, _ = boot(driver)
    try:
        fuzz = ServerFuzz(server.port, tcp, seed=19)
        report = fuzz.run(seconds=8)
        alive = server.proc.poll() is None
    finally:
        quit_server(server)
    assert alive, server.output[-3000:]
    assert report.bursts >= 2 and report.packets > 1000, report
    assert report.failures == [], report
