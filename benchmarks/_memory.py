"""A process's memory as the import benchmarks report it: the peak resident size above idle."""

from __future__ import annotations


def status_mb(field: str) -> float:
    """A size from /proc/self/status (VmRSS, VmHWM), in MB."""
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(field + ":"))
    return int(line.split()[1]) / 1024


def idle_mb() -> float:
    """Resident now, with the peak reset to it (Linux: clear_refs 5): Django's start-up peaks
    above what it settles at, and ru_maxrss would keep that peak."""
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    return status_mb("VmRSS")
