"""An idle magnetar keeps up with every period: no xrun in 5 s at 256-frame periods, on the
clock driver and on JACK's dummy backend (jackd -p 256)."""

from __future__ import annotations

import os
import re
import time

from rtcheck import SAMPLE_RATE, foreign_rt_cpu_seconds, rt_stats, steal_seconds

PERIOD = 256
SECONDS = 5.0
# The first periods after boot (JACK port connections, first touches of memory) are not the
# steady state this test is about; they are reported, not asserted.
SETTLE_SECONDS = 0.5
# The machine is shared: other people's real-time threads (their servers and jackd, some at a
# higher priority than a JACK client's 5) and the hypervisor can take our core for whole periods.
# More than this much of their CPU time in a window makes it "disturbed", and a disturbed window with
# xruns is measured again (at most WINDOWS times).  Xruns in an undisturbed window fail at once.
DISTURBANCE_SECONDS = 0.05
WINDOWS = 3


def test_idle_server_has_no_xrun_in_5_s_at_256_frames(driver, magnetar):
    server = magnetar(period=PERIOD)
    own = {os.getpid(), server.pid} | ({driver.proc.pid} if driver is not None else set())
    time.sleep(SETTLE_SECONDS)
    tried = []
    for _ in range(WINDOWS):
        before = rt_stats(server.port)
        jack_log_before = driver.log_text() if driver is not None else ""
        foreign0, steal0 = foreign_rt_cpu_seconds(own), steal_seconds()
        t0 = time.monotonic()
        time.sleep(SECONDS)
        after = rt_stats(server.port)
        elapsed = time.monotonic() - t0
        foreign, steal = foreign_rt_cpu_seconds(own) - foreign0, steal_seconds() - steal0

        xruns = after.xruns - before.xruns
        periods = after.steady_periods - before.steady_periods
        jack_reports = []
        if driver is not None:
            new_log = driver.log_text()[len(jack_log_before) :]
            jack_reports = [line for line in new_log.splitlines() if re.search(r"xrun", line, re.IGNORECASE)]
        summary = (
            f"{xruns} xruns in {elapsed:.2f} s ({periods} steady periods of "
            f"{elapsed * SAMPLE_RATE / PERIOD:.0f}; jackd reported {len(jack_reports)}); {before.xruns} during boot; "
            f"others' real-time threads ran {foreign:.2f} s, hypervisor steal {steal:.2f} s"
        )
        print(summary)
        tried.append(summary)
        disturbed = foreign > DISTURBANCE_SECONDS or steal > DISTURBANCE_SECONDS
        if xruns == 0 and not jack_reports:
            return
        assert disturbed, f"magnetar missed periods while idle and nothing else took the CPU: {summary} {jack_reports[:5]}"
    raise AssertionError("xruns in every window, each disturbed by other load:\n" + "\n".join(tried))
