"""The grader's end of a worker's requests and replies: a forked worker's socket, or a spawned worker's pipes.

Both give the next reply as ``("ok", reply)``, ``("eof", None)`` when the worker died, or ``("garbled", why)``
for a frame that cannot be read, and raise :class:`TimeoutError` when none came by the deadline.
"""
from __future__ import annotations

import queue
import threading
import time
from typing import Any

from grader.sandbox.child import protocol as wire


class SocketChannel:
    """A forked worker's socket, as a buffered stream whose reads and writes give up at ``deadline``
    (``time.monotonic()``) with :class:`TimeoutError`."""

    def __init__(self, sock):
        self.sock = sock
        self.deadline = 0.0
        self._buffer = memoryview(b"")

    def _arm(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        self.sock.settimeout(left)

    def read(self, n: int) -> bytes:
        if not self._buffer:                             # one recv usually holds a whole reply
            self._arm()
            self._buffer = memoryview(self.sock.recv(min(max(n, 1 << 16), 1 << 20)))
            if not self._buffer:
                return b""
        data, self._buffer = self._buffer[:n], self._buffer[n:]
        return data.tobytes()

    def write(self, data: bytes) -> None:
        self._arm()
        self.sock.sendall(data)

    def flush(self) -> None:
        pass

    def send(self, data: bytes, timeout: float) -> None:
        """Write ``data``, giving up after ``timeout`` seconds (:class:`TimeoutError`)."""
        self.deadline = time.monotonic() + timeout
        self.write(data)

    def next_message(self, deadline: float) -> tuple[str, Any]:
        self.deadline = deadline                         # read right here: no thread
        try:
            return "ok", wire.read_message(self)
        except (EOFError, ConnectionError):
            return "eof", None
        except TimeoutError:
            raise
        except Exception as exc:                         # a garbled or oversized frame
            return "garbled", f"{type(exc).__name__}: {exc}"

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class PipeChannel:
    """A spawned worker's stdin and stdout; a thread reads the replies, so a read can give up in time."""

    def __init__(self, requests, replies):
        self._requests = requests
        self._replies: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, args=(replies, self._replies), daemon=True).start()

    @staticmethod
    def _read(stream, replies: queue.Queue) -> None:
        while True:
            try:
                replies.put(("ok", wire.read_message(stream)))
            except EOFError:
                replies.put(("eof", None))
                return
            except Exception as exc:                     # a garbled or oversized frame
                replies.put(("garbled", f"{type(exc).__name__}: {exc}"))
                return

    def send(self, data: bytes, timeout: float) -> None:
        """Write ``data`` (a pipe write blocks: ``timeout`` is not used)."""
        self._requests.write(data)
        self._requests.flush()

    def next_message(self, deadline: float) -> tuple[str, Any]:
        try:
            return self._replies.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise TimeoutError from None

    def close(self) -> None:
        try:                                             # the reader thread owns stdout
            self._requests.close()
        except OSError:
            pass
