"""A training script shaped like MXNet's image-classification fit.py: --load-epoch resumes."""
import argparse
import logging
import os

from mxnet.module import BaseModule

logging.basicConfig(level=logging.INFO)
p = argparse.ArgumentParser()
p.add_argument("--kv-store")
p.add_argument("--batch-size", type=int)
p.add_argument("--model-prefix")
p.add_argument("--load-epoch", type=int)
p.add_argument("--num-epochs", type=int, default=3)
a = p.parse_args()
mod = BaseModule(kv_rank=int(os.environ.get("FAKE_RANK", "0")))
begin = 0
if a.load_epoch is not None:
    with open("%s-%04d.params" % (a.model_prefix, a.load_epoch)) as f:
        mod.trained = int(f.read())
    begin = a.load_epoch
logging.info("start: kv=%s batch=%s begin_epoch=%d trained=%d", a.kv_store, a.batch_size, begin, mod.trained)
mod.fit(prefix=a.model_prefix, num_epoch=a.num_epochs, begin_epoch=begin)
