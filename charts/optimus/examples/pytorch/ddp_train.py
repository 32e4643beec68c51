#!/usr/bin/env python3
"""All-reduce data-parallel training (DistributedDataParallel over gloo) under Optimus.

The reference all-reduce trainer of docs/training-contract.md (section 8). Every rank runs this
file; ranks meet at MASTER_ADDR:MASTER_PORT (``WORLD_SIZE``, ``RANK``, ``LOCAL_RANK`` as torchrun
sets them; the Optimus variables stand in when they are missing).

    WORLD_SIZE=2 RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 python3 ddp_train.py --max-steps 200 &
    WORLD_SIZE=2 RANK=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 python3 ddp_train.py --max-steps 200

What makes it resizable:

* the global batch is the job's: each of the W ranks takes OPTIMUS_BATCH_SIZE samples, the step
  ``OPTIMUS_GLOBAL_BATCH_SIZE`` consecutive samples of the epoch's order -- rank r the r-th slice;
* each step ends with one small all-reduce carrying the step's loss and every rank's stop vote,
  so all ranks stop after the same step, whenever SIGTERM reached each of them;
* rank 0 alone reads the checkpoint (and broadcasts it) and rank 0 alone writes it: the model,
  the optimizer, the global step and the position in the epoch -- nothing depends on W, so the
  next generation can have any number of ranks.

Exit codes: 0 done (or stopped with a checkpoint: --stop-exit-code), 1 failed (a peer died, the
deadline passed: nothing was written), 2 bad configuration.
"""
import datetime
import os
import sys

import optimus_torch as ot

ot.block_stop_signals()  # before torch starts any thread (see ot.block_stop_signals)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

import synthetic  # noqa: E402

TRAINER = "allreduce"


def restore(cfg, log, model, optimizer):
    """Rank 0 loads the newest checkpoint and broadcasts it: (step, data_offset) of every rank."""
    state, path, error = None, None, None
    if cfg.rank == 0:
        if cfg.checkpoint_dir:
            ot.remove_partial(cfg.checkpoint_dir)
        try:
            state, path = ot.load_latest(cfg, log, TRAINER)
        except ot.ConfigError as e:
            error = str(e)
    box = [(state, path, error)]
    dist.broadcast_object_list(box, src=0)
    state, path, error = box[0]
    if error:
        raise ot.ConfigError(error)
    if state is None:
        log.note(f"starting at step 0 ({cfg.num_workers} ranks, {cfg.batch_size} samples each)")
        return 0, 0
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    log.note(
        f"resuming at step {state['step']} from {path} (written by {state['shape']['workers']} ranks; "
        f"now {cfg.num_workers} ranks, {cfg.batch_size} samples each)"
    )
    return state["step"], state["data_offset"]


def state_of(cfg, model, optimizer, step, offset):
    """What a checkpoint holds: nothing in it depends on the number of ranks."""
    return {
        "trainer": TRAINER,
        "mode": "sync",
        "step": step,
        "data_offset": offset,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "task": ot.task_signature(cfg),
        "shape": {"workers": cfg.num_workers},
        "global_batch": cfg.global_batch,
    }


def train(cfg, log, stopper):
    task = synthetic.Task(cfg)
    model = synthetic.make_model(cfg)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=cfg.momentum)
    step, offset = restore(cfg, log, model, optimizer)
    ddp = DDP(model)
    # Rank 0 alone writes checkpoints (the others hold the same state).
    save = ot.Checkpointer(cfg, log) if cfg.rank == 0 else (lambda *_: None)

    def snapshot():  # the state now: step and offset as they are when it is called
        return state_of(cfg, model, optimizer, step, offset)

    meter = ot.Meter()
    first, spe, b = True, cfg.steps_per_epoch, cfg.batch_size
    while not (cfg.max_steps and step >= cfg.max_steps):
        # This rank's slice of the step's samples: the step itself does not depend on W.
        x, y = task.batch(step // spe, offset + cfg.rank * b, b)
        optimizer.zero_grad(set_to_none=True)
        loss = synthetic.loss_fn(ddp(x), y)
        loss.backward()  # DDP averages the gradients over all ranks here
        optimizer.step()
        step += 1
        offset = 0 if step % spe == 0 else offset + cfg.global_batch
        # The step's mean loss over the whole global batch, and the stop vote of every rank.
        votes = torch.tensor([loss.item() * b, b, 1.0 if stopper.requested else 0.0], dtype=torch.float64)
        dist.all_reduce(votes)
        stop = votes[2].item() > 0
        meter.add(votes[0].item() / votes[1].item())
        if first or step % cfg.log_every == 0 or stop:
            ot.batch_record(log, cfg, meter, step)
            first = False
        if step % spe == 0:
            log.record("epoch", epoch=step // spe - 1, global_step=step, loss=meter.take_epoch())
        if stop:
            save(step, snapshot, "stop")
            return "stop"
        if cfg.checkpoint_every and step % cfg.checkpoint_every == 0:
            save(step, snapshot, "periodic")
    save(step, snapshot, "final")
    return "final"


def main(argv):
    try:
        cfg = ot.read_config(TRAINER, argv, os.environ)
    except ot.ConfigError as e:
        print(f"optimus-torch: {e}", file=sys.stderr)
        return ot.EXIT_CONFIG
    log = ot.Log(cfg)
    stopper = ot.Stopper(cfg, log).start()
    torch.set_num_threads(cfg.threads)
    try:
        dist.init_process_group(
            "gloo",
            init_method=f"tcp://{cfg.master_addr}:{cfg.master_port}",
            rank=cfg.rank,
            world_size=cfg.world_size,
            timeout=datetime.timedelta(seconds=cfg.timeout),
        )
        outcome = train(cfg, log, stopper)
        dist.barrier()  # no rank exits before rank 0's checkpoint is on disk
        dist.destroy_process_group()
    except ot.ConfigError as e:
        log.note(str(e))
        return ot.EXIT_CONFIG
    except RuntimeError as e:  # a peer died or timed out: the state of this generation is lost
        log.note(f"training failed, no checkpoint written: {str(e).splitlines()[0]}")
        return ot.EXIT_FAILED
    finally:
        log.close()
    log.note(f"{outcome}: exiting")
    return cfg.stop_exit_code if outcome == "stop" else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
