"""Progress heartbeats: a trainer tells jobsetd how far it got (our addition;
docs/agent.md, "Progress heartbeats").

    from jobset import progress
    progress.report(step=1200)                       # every step, or every N
    progress.report(step=1200, checkpoint_step=1000) # after a checkpoint

jobset-agent gives every container of a pod JOBSET_PROGRESS_FILE, a file in a
directory private to the pod, and reads its last line at most once a second
(--progress_report_interval). report() writes that line, "step=<n>" or
"step=<n> checkpoint_step=<n>", to a temporary file beside it and renames it
over the file, so that the agent never reads half a line. It costs one small
write and a rename: call it as often as steps go. Outside jobset-agent (no
variable) it writes nothing and returns False.

This module uses the standard library only.
"""

import os
import threading

ENV = "JOBSET_PROGRESS_FILE"
# The largest step the agent takes (2^62); a larger one is refused there.
MAX_STEP = 1 << 62


def _check(name, value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < 0 or value > MAX_STEP:
        raise ValueError(f"{name}: {value} is not from 0 to 2^62")


def line(step, checkpoint_step=None):
    """Returns the line report() writes, checking what the agent checks:
    step and checkpoint_step ints from 0 to 2^62, the checkpoint at most the
    step (TypeError, ValueError otherwise)."""
    _check("step", step)
    if checkpoint_step is None:
        return f"step={step}\n"
    _check("checkpoint_step", checkpoint_step)
    if checkpoint_step > step:
        raise ValueError(
            f"checkpoint_step: {checkpoint_step} is after step {step}")
    return f"step={step} checkpoint_step={checkpoint_step}\n"


def report(step, checkpoint_step=None):
    """Writes the pod's progress: `step`, the training step just done, and
    `checkpoint_step`, the step of the last checkpoint saved (None: none
    given; the agent keeps the last one it read).

    Returns True once written, False when JOBSET_PROGRESS_FILE is not set
    (not running under jobset-agent). Raises TypeError or ValueError for a
    step the agent would refuse (see line()), OSError when the file cannot
    be written. The agent counts a step lower than the last one of the same
    pod instance as a rejected line; after a restart (in place, or of the
    container) a lower step is taken."""
    text = line(step, checkpoint_step)
    path = os.environ.get(ENV, "")
    if not path:
        return False
    directory, name = os.path.split(path)
    # Beside the file (the same file system, so the rename is atomic), one
    # per thread, hidden from the agent, which reads only `name`.
    tmp = os.path.join(
        directory, f".{name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC,
                     0o644)
        try:
            os.write(fd, text.encode("ascii"))
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return True
