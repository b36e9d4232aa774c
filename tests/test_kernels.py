"""Notebooks run side by side talk to their kernels over unique Unix sockets, not probed TCP ports."""

from riskcore.kernels import IpcKernelManager


def test_kernel_managers_use_ipc_sockets_under_distinct_paths():
    a, b = IpcKernelManager(kernel_name="python3"), IpcKernelManager(kernel_name="python3")
    assert a.transport == b.transport == "ipc"
    assert a.ip != b.ip and a.ip.startswith("/")
