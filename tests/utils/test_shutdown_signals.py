"""What a foreground process waits on until SIGTERM or Ctrl-C: a signal ends the wait wherever the
main thread is when it lands, and a signal the kernel hands to another thread wakes it too.

The tests use SIGUSR1, so the test process's own SIGTERM and SIGINT stay as they were."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import pytest

from kafka_lite.utils.shutdown_signals import ShutdownSignals

pytestmark = [pytest.mark.unit, pytest.mark.timeout(60)]


@pytest.fixture
def signals():
    previous = signal.getsignal(signal.SIGUSR1)
    made: list[ShutdownSignals] = []

    def make() -> ShutdownSignals:
        made.append(ShutdownSignals((signal.SIGUSR1,)))
        return made[-1]

    yield make
    for one in reversed(made):  # each gives back the wake-up descriptor the one before it set
        one.close()
    signal.signal(signal.SIGUSR1, previous)


def test_a_signal_landing_at_any_line_of_the_wait_ends_it(signals):
    # The handler runs on the main thread between two of its bytecodes, wherever it is. Raise the
    # signal at the first line the wait runs, then at the second, and so on through every line it
    # and what it calls run: each wait must end, and record the signal. A handler that took a lock
    # the wait holds (``threading.Event.set`` with the main thread in ``Event.wait``) hangs here.
    lines_in_a_whole_wait = None
    at = 1
    while lines_in_a_whole_wait is None:
        stop = signals()
        ran = 0

        def raise_at_line(frame, event, arg, at=at):
            nonlocal ran
            if event == "line":
                ran += 1
                if ran == at:
                    signal.raise_signal(signal.SIGUSR1)
            return raise_at_line

        sys.settrace(raise_at_line)
        try:
            stop.wait(0.05)
        finally:
            sys.settrace(None)
        if ran < at:  # the whole wait ran fewer lines than this: every line has been tried
            lines_in_a_whole_wait = ran
            assert stop.received is None
        else:
            assert stop.received == signal.SIGUSR1, f"the signal raised at line {at} was not recorded"
            assert stop.wait(0), f"after the signal raised at line {at}, the next wait still waits"
        at += 1
    assert lines_in_a_whole_wait >= 5


def test_a_signal_delivered_to_another_thread_ends_the_main_threads_wait(signals):
    # The kernel hands a process's signal to any thread that does not block it. The main thread
    # blocks SIGUSR1 while it waits, so the sender's thread, started before, takes it and runs the
    # C-level handler; the wake-up byte and the recorded number still reach the main thread.
    stop = signals()
    go = threading.Event()

    def send() -> None:
        go.wait()
        os.kill(os.getpid(), signal.SIGUSR1)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    unblocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    try:
        go.set()
        assert stop.wait(30), "a signal taken by another thread did not end the main thread's wait"
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, unblocked)
    assert stop.received == signal.SIGUSR1


def test_without_a_signal_the_wait_times_out(signals):
    assert not signals().wait(0.01)


def test_the_wait_works_when_the_process_holds_more_than_a_thousand_descriptors(signals):
    """A broker holds a descriptor per segment file and per connection: the wake-up socket's number
    may be past 1024, where ``select.select`` refuses it."""
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        stop = signals()
        assert stop._wakeup.fileno() > 1024
        assert not stop.wait(0.01)
        signal.raise_signal(signal.SIGUSR1)
        assert stop.wait(5)
    finally:
        for fd in held:
            os.close(fd)


def test_a_process_waiting_exits_on_sigterm_and_a_second_one_during_its_shutdown_is_ignored(tmp_path):
    waiting = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, signal, threading\n"
            "from kafka_lite.utils.shutdown_signals import ShutdownSignals\n"
            "stop = ShutdownSignals()\n"
            "threading.Thread(target=threading.Event().wait, daemon=True).start()\n"
            "print('waiting', flush=True)\n"
            "stop.wait()\n"
            "print('stopped by', signal.Signals(stop.received).name, flush=True)\n"
            "stop.close()\n"
            "os.kill(os.getpid(), signal.SIGTERM)  # a second one, as the shutdown runs\n"
            "print('shut down', flush=True)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert waiting.stdout.readline() == "waiting\n"
    waiting.send_signal(signal.SIGTERM)
    out, _ = waiting.communicate(timeout=30)
    assert waiting.returncode == 0 and out == "stopped by SIGTERM\nshut down\n", (waiting.returncode, out)


def test_only_the_main_thread_can_wait_for_signals():
    failed: list[BaseException] = []

    def install() -> None:
        try:
            ShutdownSignals((signal.SIGUSR1,))
        except RuntimeError as e:
            failed.append(e)

    thread = threading.Thread(target=install)
    thread.start()
    thread.join()
    assert failed and "main thread" in str(failed[0])
