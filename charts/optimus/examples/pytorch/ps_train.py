#!/usr/bin/env python3
"""Parameter-server training on torch.distributed.rpc (TensorPipe) under Optimus, sync or async.

The reference parameter-server trainer of docs/training-contract.md (section 8). Every task of
the job runs this file; its role comes from the controller's environment:

    OPTIMUS_ROLE=ps|worker  OPTIMUS_INDEX=i  OPTIMUS_NUM_PS=P  OPTIMUS_NUM_WORKERS=W  OPTIMUS_MODE=sync|async

The RPC world has P + W ranks: PS k is rank k (``ps<k>``; PS 0 hosts the rendezvous at
MASTER_ADDR:MASTER_PORT), worker i is rank P + i (``worker<i>``). A ``scheduler`` task (Optimus
starts MXNet's for every PS job) is not part of it: it waits to be stopped.

* The parameters are one flat vector cut into P contiguous shards; each PS holds one shard and its
  momentum, and applies SGD with momentum to it. PS 0 also keeps the job's step counter.
* A worker step: compute the gradient of its batch at the parameters it holds, push each shard's
  slice to that PS, and get the shard's new parameters back in the same call.
  - sync: a PS applies the mean of all W workers' gradients once all have arrived, and only then
    answers the W calls -- one step of the global batch, as all-reduce does it;
  - async: a PS applies each gradient as it arrives; PS 0 hands each worker, with each answer, the
    number of the next data block it reads ("tickets"), so no block is read twice or skipped
    whatever the number of workers.
* Stopping: whoever gets SIGTERM tells PS 0. PS 0 puts the decision in its answers -- in sync in the
  answer that ends a step, the same for all W workers. Each worker finishes the step it is in and
  reports done; worker 0 waits until all are, then reads every shard and writes ONE checkpoint
  (the whole parameter vector, the momentum, the step), so a new generation can cut it into any
  number of shards. Every task then leaves through rpc.shutdown(), which returns once all have
  called it: no PS is gone before worker 0 has read it.

Exit codes as ddp_train.py: 0 done or stopped with a checkpoint (--stop-exit-code), 1 failed, 2
bad configuration.
"""
import os
import sys
import threading

import optimus_torch as ot

ot.block_stop_signals()  # before torch starts any thread (see ot.block_stop_signals)

import torch  # noqa: E402
import torch.distributed.rpc as rpc  # noqa: E402
from torch.nn.utils import parameters_to_vector, vector_to_parameters  # noqa: E402

import synthetic  # noqa: E402

TRAINER = "ps"


def shard_bounds(n, num_ps):
    """[(lo, hi)] of each PS's slice of the n parameters: contiguous, sizes differ by at most one."""
    return [(k * n // num_ps, (k + 1) * n // num_ps) for k in range(num_ps)]


# --- the parameter server ----------------------------------------------------------------------


class Shard:
    """One PS's slice of the parameters and of the momentum. On PS 0 it is also the job's step
    counter, the stop decision, the async tickets and the count of workers that have finished."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.lock = threading.Lock()
        self.ready = torch.futures.Future()  # completed by load(): pulls wait for it
        self.params = self.velocity = None
        self.step = 0
        self.data_offset = 0
        self.tickets = 0
        self.stop_reason = None
        self.grad_sum, self.loss_sum, self.samples, self.waiting = None, 0.0, 0, []
        self.done, self.all_done = 0, torch.futures.Future()

    def load(self, params, velocity, step, data_offset):
        with self.lock:
            self.params, self.velocity = params, velocity
            self.step, self.tickets, self.data_offset = step, step, data_offset
        self.ready.set_result(None)

    def pull(self):
        """The first answer of a generation: parameters, step, and (async) a first ticket."""
        with self.lock:
            return self._answer(loss=None)

    def push(self, step, grad, loss_sum, samples):
        """Takes one worker's gradient; returns a future of the answer (see the module comment)."""
        done = torch.futures.Future()
        with self.lock:
            if self.cfg.mode == "async":
                self._apply(grad)
                answers = [(done, self._answer(loss_sum / samples))]
            else:
                if step != self.step:
                    raise RuntimeError(f"a gradient of step {step + 1} reached the PS at step {self.step}")
                self.grad_sum = grad if self.grad_sum is None else self.grad_sum.add_(grad)
                self.loss_sum += loss_sum
                self.samples += samples
                self.waiting.append(done)
                answers = []
                if len(self.waiting) == self.cfg.num_workers:
                    self._apply(self.grad_sum.div_(self.cfg.num_workers))
                    answer = self._answer(self.loss_sum / self.samples)
                    answers = [(f, answer) for f in self.waiting]
                    self.grad_sum, self.loss_sum, self.samples, self.waiting = None, 0.0, 0, []
        for f, answer in answers:  # outside the lock: completing a future sends the reply
            f.set_result(answer)
        return done

    def _apply(self, grad):
        # SGD with momentum, exactly torch.optim.SGD's update (dampening 0, no Nesterov).
        self.velocity.mul_(self.cfg.momentum).add_(grad)
        self.params.add_(self.velocity, alpha=-self.cfg.lr)
        self.step += 1

    def _answer(self, loss):
        ticket = None
        if self.cfg.mode == "async":
            if self.stop_reason is None and self.cfg.max_steps and self.tickets >= self.cfg.max_steps:
                self.stop_reason = "final"
            if self.stop_reason is None:
                ticket, self.tickets = self.tickets, self.tickets + 1
        return {
            "params": self.params.clone(),
            "step": self.step,
            "loss": loss,
            "stop": self.stop_reason if self.cfg.index == 0 else None,
            "ticket": ticket,
            "data_offset": self.data_offset,
        }

    def state(self):
        with self.lock:
            return self.params.clone(), self.velocity.clone(), self.step

    def request_stop(self, reason):
        with self.lock:
            self.stop_reason = self.stop_reason or reason

    def worker_done(self):
        with self.lock:
            self.done += 1
            finished = self.done == self.cfg.num_workers
        if finished:
            self.all_done.set_result(None)


SHARD = None  # this process's shard (PS processes only); the functions below run on it


@rpc.functions.async_execution
def ps_pull():
    return SHARD.ready.then(lambda _: SHARD.pull())


@rpc.functions.async_execution
def ps_push(step, grad, loss_sum, samples):
    return SHARD.push(step, grad, loss_sum, samples)


def ps_load(params, velocity, step, data_offset):
    SHARD.load(params, velocity, step, data_offset)


def ps_state():
    return SHARD.state()


def ps_request_stop(reason):
    SHARD.request_stop(reason)


def ps_worker_done():
    SHARD.worker_done()


@rpc.functions.async_execution
def ps_wait_all_done():
    return SHARD.all_done


def run_ps(cfg, log, stopper):
    global SHARD
    SHARD = Shard(cfg)
    rpc.init_rpc(f"ps{cfg.index}", rank=cfg.rank, world_size=cfg.world_size, rpc_backend_options=options(cfg))
    stopper.forward_to(lambda: request_stop(cfg))
    rpc.shutdown()  # serves the workers until every task has called shutdown
    return "stop" if stopper.requested else "final"


# --- the worker --------------------------------------------------------------------------------


def request_stop(cfg):
    """Tells PS 0, which decides for the whole job (the reason itself is in this task's log)."""
    if cfg.role == "ps" and cfg.index == 0:
        SHARD.request_stop("stop")
    else:
        rpc.rpc_sync("ps0", ps_request_stop, args=("stop",), timeout=10)


def ask_all(cfg, fn, args_of):
    """Calls ``fn`` on every PS at once (args per shard index) and waits for all the answers."""
    futures = [rpc.rpc_async(f"ps{k}", fn, args=args_of(k)) for k in range(cfg.num_ps)]
    return [f.wait() for f in futures]


def initialise_shards(cfg, log, model, bounds):
    """Worker 0: the newest checkpoint (or the seed's initial weights), cut into this job's shards."""
    if cfg.checkpoint_dir:
        ot.remove_partial(cfg.checkpoint_dir)
    state, path = ot.load_latest(cfg, log, TRAINER)
    n = bounds[-1][1]
    if state is None:
        params, velocity, step, offset = parameters_to_vector(model.parameters()).detach(), torch.zeros(n), 0, 0
        log.note(f"starting at step 0 ({cfg.num_ps} PS, {cfg.num_workers} workers, {cfg.mode})")
    else:
        params, velocity, step, offset = state["params"], state["velocity"], state["step"], state["data_offset"]
        was = state["shape"]
        log.note(
            f"resuming at step {step} from {path} (written by {was['ps']} PS and {was['workers']} workers; "
            f"now {cfg.num_ps} PS, {cfg.num_workers} workers, {cfg.batch_size} samples each, {cfg.mode})"
        )
    if params.numel() != n:
        raise ot.ConfigError(f"the checkpoint has {params.numel()} parameters, the model {n}")
    ask_all(cfg, ps_load, lambda k: (params[slice(*bounds[k])].clone(), velocity[slice(*bounds[k])].clone(), step, offset))


def state_of(cfg, params, velocity, step, offset):
    """What a checkpoint holds: the whole vectors, so any number of PS can cut them again."""
    return {
        "trainer": TRAINER,
        "mode": cfg.mode,
        "step": step,
        "data_offset": offset,
        "params": params,
        "velocity": velocity,
        "task": ot.task_signature(cfg),
        "shape": {"ps": cfg.num_ps, "workers": cfg.num_workers},
        "global_batch": cfg.global_batch,
    }


def snapshot(cfg, offset):
    """Worker 0 reads every shard. In sync, between its answer and its next push no shard can move."""
    states = ask_all(cfg, ps_state, lambda k: ())
    params = torch.cat([s[0] for s in states])
    velocity = torch.cat([s[1] for s in states])
    return state_of(cfg, params, velocity, states[0][2], offset if cfg.mode == "sync" else 0)


def run_worker(cfg, log, stopper):
    rpc.init_rpc(
        f"worker{cfg.index}", rank=cfg.rank, world_size=cfg.world_size, rpc_backend_options=options(cfg)
    )
    stopper.forward_to(lambda: request_stop(cfg))
    task = synthetic.Task(cfg)
    model = synthetic.make_model(cfg)
    weights = list(model.parameters())
    bounds = shard_bounds(sum(p.numel() for p in weights), cfg.num_ps)
    if cfg.index == 0:
        initialise_shards(cfg, log, model, bounds)
    answers = ask_all(cfg, ps_pull, lambda k: ())
    step, offset, ticket = answers[0]["step"], answers[0]["data_offset"], answers[0]["ticket"]
    save = ot.Checkpointer(cfg, log) if cfg.index == 0 else (lambda *_: None)
    meter, spe, b, own_steps, reason = ot.Meter(), cfg.steps_per_epoch, cfg.batch_size, 0, None
    while reason is None:
        if cfg.mode == "sync" and cfg.max_steps and step >= cfg.max_steps:
            reason = "final"  # every worker holds the same step: all of them stop here
            break
        if cfg.mode == "async" and ticket is None:
            reason = answers[0]["stop"]
            break
        vector_to_parameters(torch.cat([a["params"] for a in answers]), weights)
        if cfg.mode == "sync":  # this worker's slice of the step's samples
            x, y = task.batch(step // spe, offset + cfg.index * b, b)
        else:  # the data block of this ticket
            x, y = task.batch(ticket // spe, (ticket % spe) * b, b)
        model.zero_grad(set_to_none=True)
        loss = synthetic.loss_fn(model(x), y)
        loss.backward()
        grad = parameters_to_vector([p.grad for p in weights])
        lb = loss.item() * b
        answers = ask_all(cfg, ps_push, lambda k: (step, grad[slice(*bounds[k])].clone(), lb, b))
        before, step, ticket = step, answers[0]["step"], answers[0]["ticket"]
        if cfg.mode == "sync":
            offset = 0 if step % spe == 0 else offset + cfg.global_batch
        own_steps += 1
        meter.add(answers[0]["loss"])  # sync: the mean over the global batch; async: this batch
        stop = answers[0]["stop"] if cfg.mode == "sync" else (answers[0]["stop"] if ticket is None else None)
        if own_steps == 1 or own_steps % cfg.log_every == 0 or stop:
            ot.batch_record(log, cfg, meter, step, {"ps": cfg.num_ps})
        if step // spe > before // spe:
            log.record("epoch", epoch=step // spe - 1, global_step=step, loss=meter.take_epoch())
        if stop:
            reason = stop
        elif cfg.index == 0 and cfg.checkpoint_every and step % cfg.checkpoint_every == 0:
            save(step, lambda: snapshot(cfg, offset), "periodic")
    rpc.rpc_sync("ps0", ps_worker_done)
    if cfg.index == 0:
        try:
            rpc.rpc_sync("ps0", ps_wait_all_done, timeout=cfg.timeout)
        except RuntimeError as e:  # a worker died after its last step: the shards still hold a state
            log.note(f"not every worker reported its last step ({str(e).splitlines()[0]}); checkpointing anyway")
        last = snapshot(cfg, offset)
        save(last["step"], lambda: last, reason)
    rpc.shutdown()
    return reason


def options(cfg):
    return rpc.TensorPipeRpcBackendOptions(
        num_worker_threads=8,
        rpc_timeout=cfg.timeout,
        init_method=f"tcp://{cfg.master_addr}:{cfg.master_port}",
    )


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
        if cfg.role == "scheduler":
            log.note("this trainer needs no scheduler: waiting to be stopped")
            stopper.wait()
            outcome = "stop"
        elif cfg.role == "ps":
            outcome = run_ps(cfg, log, stopper)
        else:
            outcome = run_worker(cfg, log, stopper)
    except ot.ConfigError as e:
        log.note(str(e))
        log.close()
        ot.hard_exit(ot.EXIT_CONFIG)
    except RuntimeError as e:  # a peer died or timed out: this generation's state is lost
        log.note(f"training failed, no checkpoint written: {str(e).splitlines()[0]}")
        log.close()
        ot.hard_exit(ot.EXIT_FAILED)
    log.close()
    log.note(f"{outcome}: exiting")
    return cfg.stop_exit_code if outcome == "stop" else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
