"""`atlas serve`'s server: a browser that stops reading a response leaves no traceback in the terminal; any other
error of a request still does."""

from __future__ import annotations

import socket
import struct
import threading
import time

import pytest

from generator.serve import make_server


@pytest.fixture
def server(tmp_path):
    (tmp_path / "big.bin").write_bytes(b"\0" * (32 << 20))  # far more than the socket buffers hold
    srv = make_server(tmp_path, "127.0.0.1", 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_a_reader_who_leaves_mid_download_leaves_no_traceback(server, capfd):
    for _ in range(3):
        with socket.create_connection(server.server_address) as sock:
            sock.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
            assert sock.recv(4096).startswith(b"HTTP/1.0 200")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
    time.sleep(0.5)  # the handler threads meet the closed connection
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize(("error", "shown"), [(BrokenPipeError(), False), (ConnectionResetError(), False),
                                              (ValueError("a bug"), True)])
def test_only_connection_errors_are_silenced(server, capfd, error, shown):
    try:
        raise error
    except Exception:
        server.handle_error(None, ("127.0.0.1", 1))
    assert ("Traceback" in capfd.readouterr().err) is shown
