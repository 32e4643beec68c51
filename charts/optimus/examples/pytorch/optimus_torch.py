#!/usr/bin/env python3
"""The Optimus training contract for PyTorch programs (docs/training-contract.md, section 8).

Copy this file beside your training script; the two reference trainers (``ddp_train.py``,
``ps_train.py``) use it. It imports only the standard library at import time (torch where it is
needed), so the configuration can be checked on a machine without torch:

    python3 optimus_torch.py config allreduce|ps [trainer arguments]   # the resolved config, JSON
    python3 optimus_torch.py inspect DIR                               # the newest checkpoint, JSON

What it gives a trainer:

* ``read_config``: the environment the controller sets and the trainer's arguments in one
  validated ``Config`` -- the rank mapping, the batch split (mirrors controller/src/runtime/batch.ts).
* ``block_stop_signals`` + ``Stopper``: SIGTERM/SIGINT become a stop request that the training loop
  polls between steps, with a deadline inside the grace period (a rank whose peer died must not
  outlive it), and the parent watch that local mode relies on.
* ``Log``: progress records, one JSON object per line -- the sidecar's ``jsonl`` format.
* ``save_checkpoint`` / ``load_latest``: one file per checkpointed step, ``ckpt-<step>.pt``, written
  to a temporary name, fsynced and renamed, so a reader never sees a torn file and the newest step
  always wins (a file for an older step never replaces a newer one).
"""
import argparse
import json
import math
import os
import re
import signal
import sys
import threading
import time

FORMAT = "optimus-torch/1"
EXIT_FAILED = 1
EXIT_CONFIG = 2
STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}
CKPT_NAME = re.compile(r"^ckpt-(\d{12})\.pt$")
#: Synthetic-task arguments that must be the same in every generation of a job (checked on resume).
TASK_FIELDS = ("seed", "samples", "features", "classes", "hidden", "label_noise", "steps_per_epoch")


class ConfigError(ValueError):
    """A variable or an argument is missing or inconsistent: the trainer exits 2 with this message."""


# --- configuration -------------------------------------------------------------------------------


def split_batch(mode, batch_size, workers):
    """(per-worker batch, samples per step): the same rule as controller/src/runtime/batch.ts.

    sync: ``batch_size`` is the global batch; each of ``workers`` takes floor(batch_size / workers)
    and a step is that times ``workers`` (the remainder, < workers samples, is not taken).
    async: ``batch_size`` is one worker's batch, and one update.
    """
    if batch_size < 1:
        raise ConfigError(f"the batch size must be >= 1, got {batch_size}")
    if mode == "async":
        return batch_size, batch_size
    per_worker = max(1, batch_size // max(1, workers))
    return per_worker, per_worker * workers


def _int(env, name, default=None):
    raw = env.get(name)
    if raw is None or raw == "":
        if default is None:
            raise ConfigError(f"{name} is not set")
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be an integer, got {raw!r}") from None


def _parser(kind):
    p = argparse.ArgumentParser(
        prog=f"{'ddp' if kind == 'allreduce' else 'ps'}_train.py",
        description="Optimus reference PyTorch trainer (docs/training-contract.md, section 8).",
    )
    a = p.add_argument
    a("--batch-size", type=int, default=None,
      help="the job's batchSize (sync: global per step; async: per worker); used only when "
           "OPTIMUS_BATCH_SIZE is unset (default: $OPTIMUS_GLOBAL_BATCH_SIZE, else 64)")
    a("--steps-per-epoch", type=int, default=50, help="global steps per epoch: the job's convergence.stepsPerEpoch")
    a("--max-steps", type=int, default=0, help="stop (and checkpoint) after this global step; 0: run until stopped")
    a("--max-epochs", type=int, default=0, help="the same in epochs (the smaller limit wins)")
    a("--log-every", type=int, default=10, help="a progress record every N global steps (and the first step)")
    a("--checkpoint-every", type=int, default=None, help="periodic checkpoint every N steps (default: one epoch; 0: none)")
    a("--checkpoint-dir", default=None, help="default: $OPTIMUS_CHECKPOINT_DIR; none: never checkpoint")
    a("--keep-checkpoints", type=int, default=2, help="checkpoint files kept (newest first)")
    a("--lr", type=float, default=0.05)
    a("--momentum", type=float, default=0.9)
    a("--seed", type=int, default=0, help="the synthetic task and the initial weights")
    a("--samples", type=int, default=16384, help="size of the synthetic data set")
    a("--features", type=int, default=32)
    a("--classes", type=int, default=10)
    a("--hidden", type=int, default=128, help="width of the two hidden layers (scales the checkpoint)")
    a("--label-noise", type=float, default=0.1, help="fraction of random labels: the loss plateaus above 0")
    a("--threads", type=int, default=None, help="torch threads per process (default: $OMP_NUM_THREADS, else 1)")
    a("--timeout", type=float, default=120.0, help="seconds a collective / RPC may wait for a peer")
    a("--log-file", default=None,
      help="also append the records to this file (only when the pod sets optimus.dev/capture-output: "
           "\"false\"; then pass \"$OPTIMUS_LOG_PATH\"); $OPTIMUS_DONE_FILE is touched at exit")
    a("--stop-exit-code", type=int, default=0, help="exit code after a requested stop with its checkpoint")
    if kind == "ps":
        a("--mode", choices=["sync", "async"], default=None, help="default: $OPTIMUS_MODE, else sync")
    return p


class Config:
    """Everything a trainer reads, resolved and checked. ``as_dict()`` is what ``config`` prints."""

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def as_dict(self):
        return dict(sorted(self.__dict__.items()))


def _rendezvous(env, notes, world_size, rank0_role):
    """MASTER_ADDR/MASTER_PORT, else rank 0's pod under the job's headless Service, else localhost."""
    service = env.get("OPTIMUS_SERVICE")
    addr = env.get("MASTER_ADDR") or (f"{rank0_role}-0.{service}" if service else "127.0.0.1")
    port = _int(env, "MASTER_PORT", _int(env, "OPTIMUS_PORT", 29500))
    if world_size > 1 and not env.get("MASTER_ADDR") and not service:
        notes.append("MASTER_ADDR and OPTIMUS_SERVICE are unset: rendezvous on 127.0.0.1")
    return addr, port


def read_config(kind, argv, env):
    """The trainer's configuration from ``argv`` and ``env`` (pure: no torch, no I/O)."""
    if kind not in ("allreduce", "ps"):
        raise ConfigError(f"kind must be allreduce or ps, got {kind!r}")
    args = _parser(kind).parse_args(argv)
    notes = []
    mode = "sync" if kind == "allreduce" else (args.mode or env.get("OPTIMUS_MODE") or "sync")
    if mode not in ("sync", "async"):
        raise ConfigError(f"OPTIMUS_MODE must be sync or async, got {mode!r}")
    role = env.get("OPTIMUS_ROLE", "worker")
    if kind == "allreduce":
        # torchrun's variables first; the Optimus ones stand in (a worker's index is its rank).
        world_size = _int(env, "WORLD_SIZE", _int(env, "OPTIMUS_NUM_WORKERS", 1))
        rank = _int(env, "RANK", _int(env, "OPTIMUS_INDEX", 0))
        if role != "worker":
            raise ConfigError(f"an all-reduce job has workers only; OPTIMUS_ROLE is {role!r}")
        if env.get("OPTIMUS_NUM_WORKERS") and _int(env, "OPTIMUS_NUM_WORKERS") != world_size:
            raise ConfigError(f"WORLD_SIZE={world_size} but OPTIMUS_NUM_WORKERS={env['OPTIMUS_NUM_WORKERS']}")
        if env.get("OPTIMUS_INDEX") and _int(env, "OPTIMUS_INDEX") != rank:
            raise ConfigError(f"RANK={rank} but OPTIMUS_INDEX={env['OPTIMUS_INDEX']}")
        num_ps, num_workers, index = 0, world_size, rank
        local_rank = _int(env, "LOCAL_RANK", 0)
        addr, port = _rendezvous(env, notes, world_size, "worker")
    else:
        num_ps = _int(env, "OPTIMUS_NUM_PS", 1)
        num_workers = _int(env, "OPTIMUS_NUM_WORKERS", 1)
        index = _int(env, "OPTIMUS_INDEX", 0)
        if role not in ("ps", "worker", "scheduler"):
            raise ConfigError(f"OPTIMUS_ROLE must be ps, worker or scheduler, got {role!r}")
        # Rank mapping of the RPC world: PS k is rank k (PS 0 hosts the rendezvous), worker i is
        # rank num_ps + i. A scheduler (MXNet's; Optimus starts one per PS job) is not in it.
        count = num_ps if role == "ps" else num_workers
        if role != "scheduler" and not 0 <= index < count:
            raise ConfigError(f"OPTIMUS_INDEX={index} is outside 0..{count - 1} for role {role}")
        world_size = num_ps + num_workers
        rank = index if role == "ps" else (num_ps + index if role == "worker" else -1)
        local_rank = _int(env, "LOCAL_RANK", 0)
        addr, port = _rendezvous(env, notes, world_size, "ps")
    if num_workers < 1 or (kind == "ps" and num_ps < 1):
        raise ConfigError(f"a job needs at least one worker (and one PS): ps={num_ps}, workers={num_workers}")
    if kind == "allreduce" and not 0 <= rank < world_size:
        raise ConfigError(f"RANK={rank} is outside 0..{world_size - 1}")

    job_batch = args.batch_size if args.batch_size is not None else _int(env, "OPTIMUS_GLOBAL_BATCH_SIZE", 64)
    per_worker, global_batch = split_batch(mode, job_batch, num_workers)
    if env.get("OPTIMUS_BATCH_SIZE"):
        per_worker = _int(env, "OPTIMUS_BATCH_SIZE")
        global_batch = per_worker * num_workers if mode == "sync" else per_worker
    if env.get("OPTIMUS_GLOBAL_BATCH_SIZE") and _int(env, "OPTIMUS_GLOBAL_BATCH_SIZE") != global_batch:
        raise ConfigError(
            f"OPTIMUS_GLOBAL_BATCH_SIZE={env['OPTIMUS_GLOBAL_BATCH_SIZE']} but this shape's step is "
            f"{global_batch} samples ({per_worker} per worker, {num_workers} workers, {mode})"
        )
    if per_worker < 1:
        raise ConfigError(f"OPTIMUS_BATCH_SIZE must be >= 1, got {per_worker}")

    spe = args.steps_per_epoch
    if spe < 1 or args.log_every < 1:
        raise ConfigError("--steps-per-epoch and --log-every must be >= 1")
    limits = [n for n in (args.max_steps, args.max_epochs * spe) if n > 0]
    grace = float(env.get("OPTIMUS_GRACE_SECONDS") or 30)
    parent = env.get("OPTIMUS_PARENT_PID")
    return Config(
        kind=kind,
        mode=mode,
        role=role,
        index=index,
        rank=rank,
        world_size=world_size,
        local_rank=local_rank,
        num_ps=num_ps,
        num_workers=num_workers,
        master_addr=addr,
        master_port=port,
        batch_size=per_worker,
        global_batch=global_batch,
        steps_per_epoch=spe,
        max_steps=min(limits) if limits else 0,
        log_every=args.log_every,
        checkpoint_every=spe if args.checkpoint_every is None else args.checkpoint_every,
        checkpoint_dir=args.checkpoint_dir or env.get("OPTIMUS_CHECKPOINT_DIR") or None,
        keep_checkpoints=max(1, args.keep_checkpoints),
        lr=args.lr,
        momentum=args.momentum,
        seed=args.seed,
        samples=args.samples,
        features=args.features,
        classes=args.classes,
        hidden=args.hidden,
        label_noise=args.label_noise,
        threads=args.threads or _int(env, "OMP_NUM_THREADS", 1),
        timeout=args.timeout,
        log_file=args.log_file,
        done_file=env.get("OPTIMUS_DONE_FILE") or None,
        grace_seconds=grace,
        parent_pid=int(parent) if parent else None,
        stop_exit_code=args.stop_exit_code,
        job=f"{env.get('OPTIMUS_NAMESPACE', '')}/{env.get('OPTIMUS_JOB', '')}".strip("/"),
        notes=notes,
    )


def task_signature(cfg):
    """What must not change between the generations of one job (checked against the checkpoint)."""
    return {k: getattr(cfg, k) for k in TASK_FIELDS}


# --- the log ---------------------------------------------------------------------------------------


def _clean(v):
    if isinstance(v, float):
        return round(v, 6) if math.isfinite(v) else None  # JSON has no NaN: the sidecar would drop the line
    return v


class Log:
    """Progress records on stdout (the log tee copies stdout to $OPTIMUS_LOG_PATH) and, with
    ``--log-file``, appended to that file too. Notes for people go to stderr as plain text."""

    def __init__(self, cfg):
        self.cfg = cfg
        self._file = open(cfg.log_file, "a", encoding="utf-8") if cfg.log_file else None
        self._lock = threading.Lock()
        for n in cfg.notes:
            self.note(n)

    def record(self, kind, **fields):
        """One jsonl record: ``{"kind": ..., "epoch": ..., "batch": ..., ...}`` (see the contract)."""
        line = json.dumps({"kind": kind, **{k: _clean(v) for k, v in fields.items()}}, separators=(",", ":"))
        with self._lock:
            print(line, flush=True)
            if self._file:
                self._file.write(line + "\n")
                self._file.flush()

    def note(self, text):
        who = f"{self.cfg.role} {self.cfg.index}" if self.cfg.role != "scheduler" else "scheduler"
        print(f"optimus-torch [{who}]: {text}", file=sys.stderr, flush=True)

    def close(self):
        """Ends the log; with --log-file, touches $OPTIMUS_DONE_FILE so the sidecar drains and exits."""
        if self._file:
            self._file.close()
            self._file = None
            if self.cfg.done_file:
                open(self.cfg.done_file, "a").close()


def position(step, steps_per_epoch, workers, mode):
    """(epoch, batch) of the record after global ``step`` (1-based), as the controller reads them.

    sync: ``batch`` is the 0-based index of the step in its epoch, so the controller's
    ``epoch * stepsPerEpoch + batch + 1`` is exactly ``step``. async: the controller counts
    ``(batch + 1) * workers`` updates per worker batch, so ``batch`` is this worker's share of the
    epoch's updates (the estimate is within ``workers`` updates; ``global_step`` is exact).
    """
    epoch, in_epoch = divmod(step - 1, steps_per_epoch)
    if mode == "sync":
        return epoch, in_epoch
    return epoch, max(0, (in_epoch + 1) // workers - 1)


class Meter:
    """Speed and loss over the steps since the last record (and the epoch's mean loss)."""

    def __init__(self):
        self.since = time.monotonic()
        self.steps = 0
        self.loss = 0.0
        self.epoch_loss = 0.0
        self.epoch_steps = 0

    def add(self, loss):
        self.steps += 1
        self.loss += loss
        self.epoch_loss += loss
        self.epoch_steps += 1

    def take(self, per_worker_batch):
        """(mean loss, samples/s of this worker, seconds per step) since the last take."""
        now = time.monotonic()
        elapsed = max(now - self.since, 1e-9)
        out = (self.loss / max(1, self.steps), per_worker_batch * self.steps / elapsed, elapsed / max(1, self.steps))
        self.since, self.steps, self.loss = now, 0, 0.0
        return out

    def take_epoch(self):
        out = self.epoch_loss / max(1, self.epoch_steps)
        self.epoch_loss, self.epoch_steps = 0.0, 0
        return out


def batch_record(log, cfg, meter, step, extra=None):
    """The progress record after global ``step``: every worker prints one (its own speed)."""
    loss, samples_per_sec, step_time = meter.take(cfg.batch_size)
    epoch, batch = position(step, cfg.steps_per_epoch, cfg.num_workers, cfg.mode)
    log.record(
        "batch",
        epoch=epoch,
        batch=batch,
        global_step=step,
        loss=loss,
        samples_per_sec=samples_per_sec,
        step_time=step_time,
        batch_size=cfg.batch_size,
        global_batch=cfg.global_batch,
        workers=cfg.num_workers,
        **(extra or {}),
    )


# --- stopping --------------------------------------------------------------------------------------


def block_stop_signals():
    """Blocks SIGTERM/SIGINT in this thread and in every thread started after it.

    Call it before ``import torch``: torch, gloo and TensorPipe start threads, and a signal must
    reach the Stopper's thread (which waits for it with sigwait) even while the main thread is
    blocked inside a collective -- a Python handler would only run once that call returned.
    """
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)


class Stopper:
    """A stop request from SIGTERM/SIGINT, a dead parent (OPTIMUS_PARENT_PID), or the program.

    The training loop polls ``requested`` between steps. From the request on, the process has until
    the deadline -- 5 s before the end of the grace period ($OPTIMUS_GRACE_SECONDS, default 30), or
    half of it when it is shorter than 10 s -- to finish; past it, it exits 1 without writing
    anything (a rank whose peer died would otherwise wait for it until SIGKILL), and the newest
    checkpoint on disk stays the one to resume.
    """

    def __init__(self, cfg, log):
        self.cfg = cfg
        self.log = log
        self.reason = None
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._forward = None
        grace = cfg.grace_seconds
        self.deadline_seconds = max(grace / 2, grace - 5)

    def start(self):
        threading.Thread(target=self._signals, name="optimus-signals", daemon=True).start()
        if self.cfg.parent_pid:
            threading.Thread(target=self._parent, name="optimus-parent", daemon=True).start()
        return self

    @property
    def requested(self):
        return self._event.is_set()

    def wait(self, timeout=None):
        return self._event.wait(timeout)

    def request(self, reason):
        with self._lock:
            if self._event.is_set():
                return
            self.reason = reason
            self._event.set()
            forward = self._forward
        self.log.note(f"stop requested ({reason}): finishing the current step")
        threading.Thread(target=self._deadline, name="optimus-deadline", daemon=True).start()
        if forward:
            self._run(forward)

    def forward_to(self, fn):
        """Runs ``fn()`` on a request (now, if one came already): e.g. tell PS 0 to stop the job."""
        with self._lock:
            self._forward = fn
            pending = self._event.is_set()
        if pending:
            self._run(fn)

    def _run(self, fn):
        try:
            fn()
        except Exception as e:  # a dead peer: the deadline still holds
            self.log.note(f"could not forward the stop request: {e}")

    def _signals(self):
        while True:
            sig = signal.sigwait(STOP_SIGNALS)
            self.request(signal.Signals(sig).name)

    def _parent(self):
        while os.getppid() == self.cfg.parent_pid:
            time.sleep(0.5)
        self.request("parent process gone")

    def _deadline(self):
        time.sleep(self.deadline_seconds)
        self.log.note(f"not stopped {self.deadline_seconds:.0f} s after the request: exiting without a checkpoint")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_FAILED)


# --- checkpoints -----------------------------------------------------------------------------------


def checkpoint_path(directory, step):
    return os.path.join(directory, f"ckpt-{step:012d}.pt")


def checkpoints(directory):
    """[(step, path)] of the complete checkpoint files in ``directory``, newest first."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    found = [(int(m.group(1)), os.path.join(directory, n)) for n in names for m in [CKPT_NAME.match(n)] if m]
    return sorted(found, reverse=True)


def remove_partial(directory):
    """Deletes the temporary files of writes that never finished (a writer killed mid-write)."""
    for n in os.listdir(directory) if os.path.isdir(directory) else []:
        if ".pt.tmp-" in n:
            try:
                os.remove(os.path.join(directory, n))
            except FileNotFoundError:
                pass


def save_checkpoint(cfg, state):
    """Writes ``state`` (with ``state["step"]``) as ``ckpt-<step>.pt``: temp file, fsync, rename.

    Returns (path, bytes, seconds). Older files beyond ``--keep-checkpoints`` are removed after
    the rename, so at every moment the directory holds at least one complete checkpoint.
    """
    import torch

    os.makedirs(cfg.checkpoint_dir, exist_ok=True)
    started = time.monotonic()
    final = checkpoint_path(cfg.checkpoint_dir, state["step"])
    tmp = f"{final}.tmp-{os.getpid()}"
    with open(tmp, "wb") as f:
        torch.save({"format": FORMAT, **state}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, final)
    dir_fd = os.open(cfg.checkpoint_dir, os.O_RDONLY)
    try:
        os.fsync(dir_fd)  # the rename itself survives a crash of the node
    finally:
        os.close(dir_fd)
    for _, old in checkpoints(cfg.checkpoint_dir)[cfg.keep_checkpoints:]:
        os.remove(old)
    return final, os.path.getsize(final), time.monotonic() - started


def load_latest(cfg, log, trainer):
    """The newest readable checkpoint of this job as (state, path), or (None, None).

    Raises ConfigError when it was written by another trainer or for another task: resuming it
    would silently train something else.
    """
    import torch

    if not cfg.checkpoint_dir:
        return None, None
    for step, path in checkpoints(cfg.checkpoint_dir):
        try:
            state = torch.load(path, map_location="cpu")
        except Exception as e:  # unreadable (disk trouble): the previous one is still there
            log.note(f"skipping unreadable checkpoint {path}: {e}")
            continue
        if state.get("format") != FORMAT or state.get("step") != step:
            log.note(f"skipping {path}: not an {FORMAT} checkpoint of step {step}")
            continue
        if state.get("trainer") != trainer or state.get("task") != task_signature(cfg):
            raise ConfigError(
                f"{path} was written by trainer {state.get('trainer')!r} for task {state.get('task')}, "
                f"this is {trainer!r} for {task_signature(cfg)}: use another checkpoint directory"
            )
        return state, path
    return None, None


class Checkpointer:
    """Writes and announces the checkpoints of the one rank that writes them (``cfg.checkpoint_dir``
    unset: never). A stop (or the end) at a step whose file is on disk already -- a periodic
    checkpoint of that very step, or a stop before any step -- announces that file instead of
    writing the same state again: the announcement after the stop request is what confirms it.
    """

    def __init__(self, cfg, log):
        self.cfg = cfg
        self.log = log

    def __call__(self, step, make_state, reason):
        if not self.cfg.checkpoint_dir:
            return
        path = checkpoint_path(self.cfg.checkpoint_dir, step)
        if reason != "periodic" and os.path.exists(path):
            size, seconds = os.path.getsize(path), 0.0
        else:
            path, size, seconds = save_checkpoint(self.cfg, make_state())
        checkpoint_record(self.log, self.cfg, step, path, size, seconds, reason)


def hard_exit(code):
    """Exits now, skipping interpreter teardown (an RPC agent whose peers died can hang in it)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def checkpoint_record(log, cfg, step, path, size, seconds, reason):
    """Announces a checkpoint on disk (the sidecar's ``checkpoint`` record confirms a resize)."""
    log.record(
        "checkpoint",
        epoch=step // cfg.steps_per_epoch,
        global_step=step,
        path=path,
        bytes=size,
        seconds=seconds,
        reason=reason,
    )


def main(argv):
    if len(argv) >= 2 and argv[0] == "config":
        try:
            print(json.dumps(read_config(argv[1], argv[2:], os.environ).as_dict(), indent=1))
        except ConfigError as e:
            print(f"optimus-torch: {e}", file=sys.stderr)
            return EXIT_CONFIG
        return 0
    if len(argv) == 2 and argv[0] == "inspect":
        import torch

        found = checkpoints(argv[1])
        if not found:
            print(json.dumps(None))
            return 1
        step, path = found[0]
        state = torch.load(path, map_location="cpu")
        keep = ("trainer", "mode", "step", "data_offset", "shape", "global_batch", "task", "format")
        print(json.dumps({"path": path, "bytes": os.path.getsize(path), **{k: state.get(k) for k in keep}}))
        return 0
    print(__doc__, file=sys.stderr)
    return EXIT_CONFIG


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
