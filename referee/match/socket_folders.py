"""The seats' socket folders of a referee process (``/tmp/arena-sockets-PID-*``, made by
``referee.match.local``) and their sweep. Apart from ``local`` because the sweep also runs in a
Celery worker's main process (``scheduler.sweep``), which must never load gRPC: this module
imports nothing but the standard library."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

SOCKETS_PREFIX = "arena-sockets-"
"""The seats' socket folders of a referee process: /tmp/arena-sockets-PID-*."""
SOCKETS_ROOT = Path("/tmp")


def pid_gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie, awaiting its parent's wait, has: it holds
    nothing any more). A live process of another user is not gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:  # the field after the command's closing parenthesis is the state
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def sweep_socket_folders(root: Path | None = None) -> int:
    """Remove the socket folders (this user's) left by referee processes that are gone (killed
    before they could clean up); returns how many. A folder whose pid is alive is left, even
    when the pid was reused: a leftover may stay, a live referee's folder is never touched."""
    swept = 0
    for folder in (root or SOCKETS_ROOT).glob(f"{SOCKETS_PREFIX}*-*"):
        pid = folder.name[len(SOCKETS_PREFIX):].partition("-")[0]
        if not pid.isdigit() or int(pid) == os.getpid() or not pid_gone(int(pid)):
            continue
        try:
            if folder.lstat().st_uid != os.geteuid() or folder.is_symlink():
                continue  # another user's (or not a folder a referee made)
        except OSError:
            continue  # (swept meanwhile by another sweep)
        shutil.rmtree(folder, ignore_errors=True)
        swept += not folder.exists()
    return swept
