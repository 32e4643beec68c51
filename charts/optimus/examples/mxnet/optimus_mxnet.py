#!/usr/bin/env python3
"""Runs MXNet's image-classification examples (train_imagenet.py, train_cifar10.py, anything built
on common/fit.py) under Optimus so that every resize RESUMES instead of starting over.

    python3 optimus_mxnet.py train_imagenet.py --network resnet --num-layers 50 ...

What it adds (the training contract, docs/training-contract.md):

* arguments from the environment the controller sets: ``--kv-store $OPTIMUS_KVSTORE``,
  ``--batch-size $OPTIMUS_BATCH_SIZE`` (this worker's share of the job's batch; fit.py's
  ``--batch-size`` is per worker), ``--model-prefix $OPTIMUS_CHECKPOINT_DIR/<name>`` and, when a
  checkpoint exists, ``--load-epoch <latest>`` -- the piece stock fit.py never does by itself;
* on SIGTERM (the controller's checkpoint request, before a resize): worker 0 saves a checkpoint
  of the current weights at the end of the batch it is in (MXNet logs
  ``Saved checkpoint to "...-0003.params"``, which the sidecar reports), and every other task keeps
  serving until that checkpoint is on disk -- in dist_sync, worker 0's batch needs every server
  and every worker -- then all exit 0. A task that cannot finish is killed at the end of the
  grace period and the job resumes from the last epoch checkpoint instead.

The checkpoint directory must be shared by all pods of the job (a ReadWriteMany volume).
Only the Python standard library is used here; mxnet is imported by the training script.
"""
import glob
import logging
import os
import re
import runpy
import signal
import subprocess
import sys
import time

LOG = logging.getLogger("optimus")

_OWNED = ("--kv-store", "--batch-size", "--load-epoch")


def latest_epoch(prefix):
    """The highest N of ``<prefix>-NNNN.params`` files, or None."""
    best = None
    for path in glob.glob(glob.escape(prefix) + "-[0-9][0-9][0-9][0-9].params"):
        m = re.search(r"-(\d{4})\.params$", path)
        if m:
            best = max(best or 0, int(m.group(1)))
    return best


def _value(argv, flag):
    for i, a in enumerate(argv):
        if a == flag and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
    return None


def _without(argv, flags):
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in flags:
            skip = True
            continue
        if any(a.startswith(f + "=") for f in flags):
            continue
        out.append(a)
    return out


def training_args(argv, env):
    """The training script's arguments: the user's, with the ones Optimus owns set from ``env``.

    Returns (args, prefix) where prefix is the checkpoint prefix (or None without a checkpoint dir).
    """
    args = _without(list(argv), _OWNED)
    if env.get("OPTIMUS_KVSTORE"):
        args += ["--kv-store", env["OPTIMUS_KVSTORE"]]
    if env.get("OPTIMUS_BATCH_SIZE"):
        args += ["--batch-size", env["OPTIMUS_BATCH_SIZE"]]
    prefix = _value(args, "--model-prefix")
    ckpt_dir = env.get("OPTIMUS_CHECKPOINT_DIR")
    if prefix is None and ckpt_dir:
        prefix = os.path.join(ckpt_dir, env.get("OPTIMUS_MODEL_NAME", "model"))
        args += ["--model-prefix", prefix]
    if prefix is not None:
        epoch = latest_epoch(prefix)
        if epoch is not None:
            args += ["--load-epoch", str(epoch)]
    return args, prefix


def _checkpoints(prefix):
    if prefix is None:
        return {}
    out = {}
    for p in glob.glob(glob.escape(prefix) + "-*.params"):
        try:
            out[p] = os.stat(p).st_mtime_ns
        except OSError:
            pass
    return out


def _exit_now(code):
    # os._exit: ps-lite's atexit barrier would wait for tasks that are gone already.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def wait_for_new_checkpoint(prefix, before, timeout_sec, poll_sec=0.5, alive=lambda: True):
    """True once a checkpoint file appeared or changed since ``before`` (a snapshot), False on timeout."""
    deadline = time.monotonic() + timeout_sec
    while time.monotonic() < deadline and alive():
        if _checkpoints(prefix) != before:
            return True
        time.sleep(poll_sec)
    return _checkpoints(prefix) != before


class _Stop:
    requested = False
    snapshot = {}


def _patch_fit(prefix, rank_of, drain_sec):
    """Wraps BaseModule.fit's batch_end_callback so a requested stop happens at a batch end."""
    from mxnet.module import BaseModule  # imported here: services must not need mxnet's modules

    fit = BaseModule.fit

    def on_batch_end(param):
        if not _Stop.requested:
            return
        module = param.locals["self"]
        if rank_of(module) == 0 and prefix is not None:
            # The epoch number is the one being trained: resuming from it repeats the rest of this
            # epoch's data with weights that have already seen part of it, rather than skipping it.
            module.save_checkpoint(prefix, param.epoch)
            _exit_now(0)
        wait_for_new_checkpoint(prefix, _Stop.snapshot, drain_sec)
        _exit_now(0)

    def patched(self, *args, **kwargs):
        cbs = kwargs.get("batch_end_callback")
        cbs = [] if cbs is None else (list(cbs) if isinstance(cbs, (list, tuple)) else [cbs])
        kwargs["batch_end_callback"] = cbs + [on_batch_end]
        return fit(self, *args, **kwargs)

    BaseModule.fit = patched


def _rank(module):
    kv = getattr(module, "_kvstore", None)
    return getattr(kv, "rank", 0) if kv is not None else 0


def run_worker(script, args, prefix, drain_sec):
    def on_term(_sig, _frame):
        LOG.info("optimus: checkpoint requested (SIGTERM); stopping at the end of this batch")
        _Stop.snapshot = _checkpoints(prefix)
        _Stop.requested = True

    signal.signal(signal.SIGTERM, on_term)
    _patch_fit(prefix, _rank, drain_sec)
    sys.argv = [script] + args
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")


def run_service(script, args, prefix, drain_sec):
    """Servers and the scheduler run in a child process that stays up after SIGTERM until worker 0's
    checkpoint is on disk (their C++ loop would not run a Python signal handler anyway)."""
    child = subprocess.Popen([sys.executable, script] + args)
    stop = {"at": None}

    def on_term(_sig, _frame):
        stop["at"] = _checkpoints(prefix)

    signal.signal(signal.SIGTERM, on_term)
    while child.poll() is None and stop["at"] is None:
        time.sleep(0.2)
    if stop["at"] is not None and child.poll() is None:
        wait_for_new_checkpoint(prefix, stop["at"], drain_sec, alive=lambda: child.poll() is None)
        child.terminate()
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.kill()
        return 0
    return child.returncode


def main(argv):
    logging.basicConfig(level=logging.INFO)
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    script, rest = argv[0], argv[1:]
    args, prefix = training_args(rest, os.environ)
    if prefix is None:
        LOG.warning("optimus: no OPTIMUS_CHECKPOINT_DIR and no --model-prefix: a resize restarts from scratch")
    # Leave the controller's grace period a margin for the exit itself.
    drain_sec = max(5.0, float(os.environ.get("OPTIMUS_GRACE_SECONDS", "120")) - 10)
    LOG.info("optimus: %s %s", script, " ".join(args))
    if os.environ.get("DMLC_ROLE", "worker") == "worker":
        run_worker(script, args, prefix, drain_sec)
        return 0
    return run_service(script, args, prefix, drain_sec)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
