"""supriya classes for magnetar's zero-latency convolution units (an extension: scsynth does not
have them).

    from magnetar_conv import MagnetarConv, prepare_message

    server.send(prepare_message(ir_prepared, ir))      # /b_gen ... "MagnetarConvPrepare"
    MagnetarConv.ar(source=In.ar(bus=0), buffer_id=ir_prepared)

``prepare_message(dest, source)`` asks the server to cut the impulse response in buffer ``source``
into partitions (its auto-tuner picks the sizes for the server's block size; pass ``sizes`` to
choose them) and to make ``dest`` the prepared buffer; ``dest`` need not be allocated first.
``MagnetarConvTD`` is the same convolution computed entirely in the unit, for comparison.
"""

from __future__ import annotations

from supriya.ugens.core import UGen, param, ugen

__all__ = ["MagnetarConv", "MagnetarConvTD", "prepare_message"]


@ugen(ar=True)
class MagnetarConv(UGen):
    """Convolves ``source`` with the prepared response in ``buffer_id``, with no latency: the
    head of the response in the unit, longer partitions as periodic tasks of the server."""

    source = param()
    buffer_id = param()


@ugen(ar=True)
class MagnetarConvTD(UGen):
    """The same convolution, with every partition computed in the unit, a slice per block."""

    source = param()
    buffer_id = param()


def prepare_message(dest: int, source: int, sizes: tuple[int, ...] = ()) -> tuple:
    """The ``/b_gen`` command that prepares ``source``'s response into ``dest``."""
    return ("/b_gen", int(dest), "MagnetarConvPrepare", int(source), *(int(s) for s in sizes))
