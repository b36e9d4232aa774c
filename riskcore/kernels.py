"""The kernel manager for notebooks run by papermill (report notebooks, sweep points).

Notebooks run side by side on the local processes. Over TCP, every kernel manager picks "free" ports by probing
and the kernel binds them later, so two kernels starting at the same moment can pick the same port: one dies and
its run waits a minute for a kernel that never answers. Unix sockets under a unique path cannot collide.
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
