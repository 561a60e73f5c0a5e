"""Runs the probe as a child process (QProcess) and turns its JSON lines into signals.

The GUI never imports torch: a crash, an out-of-memory or a hung driver ends the
child, not the app. Any interpreter can run the probe (a light GUI install can
drive a separate CUDA environment). Stop = terminate, then kill after 3 s.
"""

from __future__ import annotations

from enum import Enum

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

from memviz.probe.protocol import EXIT_BAD_INPUT, EXIT_OOM, Message, decode

MAX_STDERR = 200_000
MAX_LINE = 1 << 20  # 1 MiB: a result line is a few kilobytes


class State(Enum):
    IDLE = "idle"
    RUNNING = "running"
    CANCELLING = "cancelling"


class ProbeClient(QObject):
    sig_started = Signal()
    sig_message = Signal(object)  # Message (env, phase, sample, progress)
    sig_log = Signal(str)  # non-protocol stdout lines and stderr text
    sig_result = Signal(object)  # the result message's dict
    sig_failed = Signal(str, str)  # one-line reason, details (stderr tail / traceback)
    sig_finished = Signal()

    def __init__(self, parent: QObject | None = None, silence_timeout_s: float = 600.0) -> None:
        super().__init__(parent)
        self.state = State.IDLE
        self._hung = False
        self.watchdog = QTimer(self)
        self.watchdog.setSingleShot(True)
        self.watchdog.setInterval(int(silence_timeout_s * 1000))
        self.watchdog.timeout.connect(self._silent)
        self.process: QProcess | None = None
        self._buffer = ""
        self._stderr = ""
        self._ended = False  # a result or error message arrived
        self.env_message: dict | None = None

    def start(self, program: str, arguments: list[str]) -> bool:
        """Start `program arguments` (e.g. sys.executable, ['-m', 'memviz.probe', ...]); False if busy."""
        if self.state is not State.IDLE:
            return False
        self._buffer, self._stderr, self._ended, self.env_message, self._hung = "", "", False, None, False
        p = QProcess(self)
        p.setProcessChannelMode(QProcess.ProcessChannelMode.SeparateChannels)
        env = QProcessEnvironment.systemEnvironment()
        for key, value in {"PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8", "HF_HUB_OFFLINE": "1",
                           "PYTORCH_ALLOC_CONF": env.value("PYTORCH_ALLOC_CONF", "expandable_segments:True")}.items():
            env.insert(key, value)
        p.setProcessEnvironment(env)
        p.readyReadStandardOutput.connect(self._read_stdout)
        p.readyReadStandardError.connect(self._read_stderr)
        p.errorOccurred.connect(self._error)
        p.finished.connect(self._finished)
        self.process = p
        self.state = State.RUNNING
        p.start(program, arguments)
        self.watchdog.start()
        self.sig_started.emit()
        return True

    def _silent(self) -> None:
        """No output for the whole silence timeout: the probe hangs (a stuck driver, a deadlock)."""
        if self.state is State.RUNNING:
            self._hung = True
            self.cancel()

    def cancel(self) -> None:
        """Stop the probe: terminate, then kill if it has not ended after 3 s."""
        if self.process is None or self.state is State.IDLE:
            return
        self.state = State.CANCELLING
        self.process.terminate()
        kill_timer = QTimer(self.process)  # dies with the process object: no callback on a deleted process
        kill_timer.setSingleShot(True)
        kill_timer.timeout.connect(self.process.kill)
        kill_timer.start(3000)

    def wait_for_end(self, msecs: int = 5000) -> None:
        if self.process is not None and self.state is not State.IDLE:
            self.cancel()
            if not self.process.waitForFinished(msecs):
                self.process.kill()
                self.process.waitForFinished(1000)

    def _read_stdout(self) -> None:
        self._buffer += bytes(self.process.readAllStandardOutput()).decode("utf-8", "replace")
        *lines, self._buffer = self._buffer.split("\n")
        if len(self._buffer) > MAX_LINE:  # no protocol line is this long: drop it rather than grow for ever
            self.sig_log.emit(f"(dropped {len(self._buffer):,d} characters of output without a line end)")
            self._buffer = ""
        if lines:  # the watchdog waits for whole lines: a child trickling bytes without one is still silent
            self.watchdog.start()
        for line in lines:
            self._line(line[:MAX_LINE])

    def _line(self, line: str) -> None:
        msg: Message | None = decode(line)
        if msg is None:
            if line.strip():
                self.sig_log.emit(line)
            return
        if msg.event == "env":
            self.env_message = msg.data
        if msg.event == "result":
            self._ended = True
            self.sig_result.emit(msg.data)
        elif msg.event == "error":
            self._ended = True
            details = msg.data.get("traceback") or self._stderr[-4000:]
            self.sig_failed.emit(f"probe error ({msg.data.get('kind')}): {msg.data.get('message')}", details)
        else:
            self.sig_message.emit(msg)

    def _read_stderr(self) -> None:
        self.watchdog.start()
        text = bytes(self.process.readAllStandardError()).decode("utf-8", "replace")
        self._stderr = (self._stderr + text)[-MAX_STDERR:]
        self.sig_log.emit(text.rstrip("\n"))

    def _error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self._ended = True
            self.sig_failed.emit(f"the probe could not start: {self.process.program()} ({self.process.errorString()})",
                                 "Check the Python interpreter set for the probe.")
            self._reset()

    def _finished(self, code: int, status: QProcess.ExitStatus) -> None:
        if self._buffer.strip():
            self._line(self._buffer)
            self._buffer = ""
        self.watchdog.stop()
        if not self._ended:
            if self._hung:
                self.sig_failed.emit(f"the probe stopped responding (no output for {self.watchdog.interval() // 1000} s) "
                                     "and was stopped", self._stderr[-4000:])
            elif self.state is State.CANCELLING:
                self.sig_failed.emit("the probe was stopped", self._stderr[-4000:])
            elif status == QProcess.ExitStatus.CrashExit:
                self.sig_failed.emit("the probe crashed", self._stderr[-4000:])
            elif "No module named 'memviz'" in self._stderr or "No module named memviz" in self._stderr:
                python = self.process.program()
                self.sig_failed.emit(f"the probe's Python ({python}) does not have memviz: install it there with "
                                     f"'{python} -m pip install memviz[probe]'", self._stderr[-4000:])
            else:
                reason = {EXIT_BAD_INPUT: "bad input", EXIT_OOM: "out of memory"}.get(code, f"exit status {code}")
                self.sig_failed.emit(f"the probe ended without a result ({reason})", self._stderr[-4000:])
        self._reset()

    def _reset(self) -> None:
        self.state = State.IDLE
        self.sig_finished.emit()

