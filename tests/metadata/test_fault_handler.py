"""The fatal fault handler a real server passes the quorum controller: it ends the whole process,
even when called on the controller's own event thread (Kafka 3.3's ProcessExitingFaultHandler)."""

import subprocess
import sys

import pytest

# A fresh interpreter: the handler's whole point is that the process it runs in does not survive.
CALLED_ON_ANOTHER_THREAD = """
import logging, threading
from kafka_lite.metadata.fault_handler import ProcessExitingFaultHandler
logging.basicConfig()
handler = ProcessExitingFaultHandler()
thread = threading.Thread(target=lambda: handler.handle_fault("replay failed", ValueError("bad record")))
thread.start()
thread.join()
print("the process outlived the fault")
"""


@pytest.mark.integration
def test_the_process_exiting_handler_ends_the_process_from_the_controller_thread():
    result = subprocess.run(
        [sys.executable, "-c", CALLED_ON_ANOTHER_THREAD], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1, result
    assert "the process outlived the fault" not in result.stdout
    assert "Encountered fatal fault: replay failed" in result.stderr
    assert "ValueError: bad record" in result.stderr
