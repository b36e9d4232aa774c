"""Notebook kernels: unique Unix sockets, not probed TCP ports; shut down without an interrupt first."""

import asyncio
import signal

from riskcore.experiments.jupyter_kernels import IpcKernelManager


def test_kernel_managers_use_ipc_sockets_under_distinct_paths():
    a, b = IpcKernelManager(kernel_name="python3"), IpcKernelManager(kernel_name="python3")
    assert a.transport == b.transport == "ipc"
    assert a.ip != b.ip and a.ip.startswith("/")


def test_a_kernel_is_shut_down_without_an_interrupt_but_can_still_be_interrupted():
    async def run() -> list[int]:
        km = IpcKernelManager(kernel_name="python3")
        sent = []
        signal_kernel = km._async_signal_kernel

        async def recording(signum):
            sent.append(signum)
            await signal_kernel(signum)

        km._async_signal_kernel = recording
        await km.start_kernel()
        try:
            await km.interrupt_kernel()  # a cell that runs too long is still interrupted
            assert sent == [signal.SIGINT]
        finally:
            await km.shutdown_kernel()
        return sent

    assert asyncio.run(run()) == [signal.SIGINT]  # nothing more on shutdown
