"""The grader's end of a worker's requests and replies: a forked worker's socket, or a spawned
worker's pipes.

Both give the next reply as ``("ok", reply)``, ``("eof", None)`` when the worker died, or
``("garbled", why)`` for a frame that cannot be read, and raise :class:`TimeoutError` when none came
by the deadline.
"""

from __future__ import annotations

import math
import queue
import select
import threading
import time
from typing import Any

from grader.sandbox.child import protocol as wire


class SocketChannel:
    """A forked worker's socket, as a buffered stream whose reads give up at ``deadline``
    (``time.monotonic()``) with :class:`TimeoutError`. Requests are queued and written as the worker
    takes them, also while a reply is awaited: so a whole phase's calls can be sent at once, and
    neither side ever waits on the other's writing."""

    def __init__(self, sock):
        sock.setblocking(False)
        self.sock = sock
        self._in = bytearray()  # replies received, from _at on not read yet
        self._at = 0
        self._chunk = bytearray(1 << 17)  # what one recv takes
        self._chunk_view = memoryview(self._chunk)
        self._out = bytearray()  # requests not written yet
        self._poll = select.poll()
        self._poll.register(sock, select.POLLIN)

    def _pump(self) -> None:
        """Write what the socket takes now of the queued requests; none once the worker is gone
        (its end is read after the replies it sent before it died: a death is the call's that was
        running, not the one written after it)."""
        while self._out:
            try:
                written = self.sock.send(self._out)
            except BlockingIOError:
                return
            except OSError:
                self._out.clear()
                return
            del self._out[:written]

    def _receive(self, deadline: float) -> bool:
        """Wait until the worker sends more (writing queued requests meanwhile) and keep it; False
        when the worker is gone. :raises TimeoutError: nothing came by ``deadline``."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            self._poll.modify(self.sock, select.POLLIN | (select.POLLOUT if self._out else 0))
            events = 0
            for _, event in self._poll.poll(max(1, math.ceil(left * 1000))):
                events |= event
            if events & select.POLLOUT:
                self._pump()
            if not events & (select.POLLIN | select.POLLHUP | select.POLLERR):
                continue
            try:
                size = self.sock.recv_into(self._chunk)
            except BlockingIOError:
                continue
            if self._at > (1 << 16) or (
                self._at and self._at == len(self._in)
            ):  # what was read goes
                del self._in[: self._at]
                self._at = 0
            self._in += self._chunk_view[:size]
            return size > 0

    def send(self, data: bytes, timeout: float) -> None:
        """Queue ``data`` and write what the worker takes now (the rest while its replies are
        awaited)."""
        self._out += data
        self._pump()

    def next_message(self, deadline: float) -> tuple[str, Any]:
        while True:  # read right here: no thread
            try:
                found = wire.split_message(self._in, self._at)
                if found is not None:
                    frames, head, self._at = found
                    return "ok", wire.decode(frames, head)
                if not self._receive(deadline):
                    return "eof", None
            except ConnectionError:
                return "eof", None
            except TimeoutError:
                raise
            except Exception as exc:  # a garbled or oversized frame
                return "garbled", f"{type(exc).__name__}: {exc}"

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class PipeChannel:
    """A spawned worker's stdin and stdout; a thread reads the replies, so a read can give up in
    time."""

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
            except Exception as exc:  # a garbled or oversized frame
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
        try:  # the reader thread owns stdout
            self._requests.close()
        except OSError:
            pass
