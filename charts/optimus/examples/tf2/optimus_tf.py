#!/usr/bin/env python3
"""TensorFlow 2 ParameterServerStrategy + Keras Model.fit under Optimus, resuming after a resize.

One file runs every task of the job (the OptimusJob gives each role the same command):

* Optimus' ``Scheduler`` replica is TensorFlow's coordinator (``chief``): it builds the model under
  ``ParameterServerStrategy`` and runs ``model.fit``;
* ``PS`` replicas are TF parameter servers, ``Worker`` replicas TF workers (``tf.distribute.Server``).

``TF_CONFIG`` is built from the environment the controller sets (``OPTIMUS_ROLE``, ``OPTIMUS_INDEX``,
``OPTIMUS_NUM_PS``, ``OPTIMUS_NUM_WORKERS``, ``OPTIMUS_SERVICE``, ``OPTIMUS_PORT``): every pod is
``<role>-<index>.<job>.<namespace>.svc`` through the job's headless Service.

Checkpoint contract (docs/training-contract.md): on SIGTERM the coordinator saves a
``tf.train.Checkpoint`` of the model, the optimizer and the epoch into ``$OPTIMUS_CHECKPOINT_DIR``,
announces it with a JSON line ``{"kind": "checkpoint", ...}`` (the sidecar's jsonl format) and exits;
parameter servers and workers keep serving until that checkpoint is written, then exit. A
restarted coordinator restores the latest checkpoint and continues with ``initial_epoch``.

Needs TensorFlow 2.x with Keras 2 (tf.keras): Keras 3 (TF >= 2.16) no longer runs Model.fit under
ParameterServerStrategy, so the example pins tensorflow/tensorflow:2.15.0.
"""
import json
import os
import signal
import sys
import threading
import time

ROLE_TO_TF = {"scheduler": "chief", "ps": "ps", "worker": "worker"}


def build_tf_config(env):
    """TF_CONFIG for this task, from the controller's environment (pure: testable without TF)."""
    service = env["OPTIMUS_SERVICE"]
    port = env.get("OPTIMUS_PORT", "9091")
    host = lambda role, i: f"{role}-{i}.{service}:{port}"  # noqa: E731 (pod hostname + subdomain)
    cluster = {
        "chief": [host("scheduler", 0)],
        "ps": [host("ps", i) for i in range(int(env["OPTIMUS_NUM_PS"]))],
        "worker": [host("worker", i) for i in range(int(env["OPTIMUS_NUM_WORKERS"]))],
    }
    role = env["OPTIMUS_ROLE"]
    if role not in ROLE_TO_TF:
        raise ValueError(f"OPTIMUS_ROLE must be one of {sorted(ROLE_TO_TF)}, got {role!r}")
    return {"cluster": cluster, "task": {"type": ROLE_TO_TF[role], "index": int(env.get("OPTIMUS_INDEX", "0"))}}


def log_json(**fields):
    print(json.dumps(fields), flush=True)


def checkpoint_state(ckpt_dir):
    """(index, mtime) of the checkpoint state file; changes when a checkpoint is written."""
    path = os.path.join(ckpt_dir or "", "checkpoint")
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def serve(tf, resolver, ckpt_dir, drain_sec):
    """A PS or worker task: serve until SIGTERM, then until the coordinator's checkpoint is written."""
    tf.distribute.Server(
        resolver.cluster_spec(),
        job_name=resolver.task_type,
        task_index=resolver.task_id,
        protocol=resolver.rpc_layer or "grpc",
        start=True,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    while not stop.wait(0.5):
        pass
    before, deadline = checkpoint_state(ckpt_dir), time.monotonic() + drain_sec
    while time.monotonic() < deadline and checkpoint_state(ckpt_dir) == before:
        time.sleep(0.5)
    os._exit(0)


def coordinate(tf, resolver, env):
    ckpt_dir = env.get("OPTIMUS_CHECKPOINT_DIR")
    batch = int(env.get("OPTIMUS_BATCH_SIZE", "64"))
    epochs = int(env.get("EPOCHS", "20"))
    steps_per_epoch = int(env.get("STEPS_PER_EPOCH", "500"))
    strategy = tf.distribute.ParameterServerStrategy(resolver)

    def dataset_fn(input_context):
        (x, y), _ = tf.keras.datasets.mnist.load_data()
        ds = tf.data.Dataset.from_tensor_slices(((x / 255.0).astype("float32"), y.astype("int64")))
        ds = ds.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        return ds.shuffle(10_000).repeat().batch(batch).prefetch(2)

    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Flatten(input_shape=(28, 28)),
                tf.keras.layers.Dense(256, activation="relu"),
                tf.keras.layers.Dense(10),
            ]
        )
        model.compile(
            optimizer=tf.keras.optimizers.SGD(0.05),
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            steps_per_execution=10,
        )
        epoch_var = tf.Variable(0, dtype=tf.int64, trainable=False)
        ckpt = tf.train.Checkpoint(model=model, optimizer=model.optimizer, epoch=epoch_var)
    manager = tf.train.CheckpointManager(ckpt, ckpt_dir, max_to_keep=3) if ckpt_dir else None
    if manager and manager.latest_checkpoint:
        ckpt.restore(manager.latest_checkpoint)
        log_json(kind="epoch", epoch=int(epoch_var.numpy()), resumed_from=manager.latest_checkpoint)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    class Optimus(tf.keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.epoch, self.t = 0, time.monotonic()

        def on_epoch_begin(self, epoch, logs=None):
            self.epoch = epoch

        def on_train_batch_end(self, step, logs=None):
            now = time.monotonic()
            if step % 10 == 9:
                # One line per 10 steps: the coordinator's step rate covers all workers together.
                log_json(kind="batch", epoch=self.epoch, step=step, step_time=(now - self.t) / 10,
                         loss=float((logs or {}).get("loss", float("nan"))))
                self.t = now
            if stop.is_set() and manager:
                epoch_var.assign(self.epoch)
                path = manager.save()
                log_json(kind="checkpoint", epoch=self.epoch, step=step, path=path)
                os._exit(0)

        def on_epoch_end(self, epoch, logs=None):
            epoch_var.assign(epoch + 1)
            if manager:
                log_json(kind="checkpoint", epoch=epoch, path=manager.save())

    model.fit(
        tf.keras.utils.experimental.DatasetCreator(dataset_fn),
        epochs=epochs,
        steps_per_epoch=steps_per_epoch,
        initial_epoch=int(epoch_var.numpy()),
        callbacks=[Optimus()],
        verbose=0,
    )


def main():
    os.environ["TF_CONFIG"] = json.dumps(build_tf_config(os.environ))
    import tensorflow as tf  # after TF_CONFIG: the resolver reads it

    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    drain = max(5.0, float(os.environ.get("OPTIMUS_GRACE_SECONDS", "120")) - 10)
    if resolver.task_type in ("ps", "worker"):
        serve(tf, resolver, os.environ.get("OPTIMUS_CHECKPOINT_DIR"), drain)
    else:
        coordinate(tf, resolver, os.environ)


if __name__ == "__main__":
    if sys.argv[1:] == ["--print-tf-config"]:
        print(json.dumps(build_tf_config(os.environ)))
    else:
        main()
