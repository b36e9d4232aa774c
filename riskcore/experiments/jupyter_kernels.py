"""The kernel manager for notebooks run by papermill (report notebooks, sweep points).

Notebooks run side by side on the local processes. Over TCP, every kernel manager picks "free" ports by probing
and the kernel binds them later, so two kernels starting at the same moment can pick the same port: one dies and
its run waits a minute for a kernel that never answers. Unix sockets under a unique path cannot collide.

A kernel is shut down without jupyter_client's interrupt first: papermill shuts it down after its last cell, and
an interrupt landing in an idle kernel on a busy machine is logged as "ERROR | KeyboardInterrupt caught in kernel"
in the middle of `make report`'s output. The shutdown request alone stops the kernel (and a kernel that does not
answer it is killed after `shutdown_wait_time`); a cell that times out is still interrupted.
"""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import default


class IpcKernelManager(AsyncKernelManager):
    @default("transport")
    def _transport_default(self) -> str:
        return "ipc"

    @default("ip")
    def _ip_default(self) -> str:
        # sockets are the files <ip>-<port>, removed when the kernel shuts down
        return str(Path(tempfile.gettempdir()) / f"riskcore-kernel-{uuid.uuid4().hex[:16]}")

    async def _async_interrupt_kernel(self) -> None:
        if self.shutting_down:
            return
        await super()._async_interrupt_kernel()
