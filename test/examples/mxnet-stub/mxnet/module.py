import collections
import logging
import time

BatchEndParam = collections.namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])


class BaseModule:
    def __init__(self, kv_rank=0):
        self._kvstore = type("KV", (), {"rank": kv_rank})()
        self.trained = 0

    def save_checkpoint(self, prefix, epoch):
        name = "%s-%04d.params" % (prefix, epoch)
        with open(name, "w") as f:
            f.write(str(self.trained))
        logging.info('Saved checkpoint to "%s"', name)

    def fit(self, prefix=None, num_epoch=3, begin_epoch=0, batches=1000, batch_end_callback=None, **_):
        cbs = batch_end_callback or []
        cbs = cbs if isinstance(cbs, list) else [cbs]
        for epoch in range(begin_epoch, num_epoch):
            for nbatch in range(batches):
                time.sleep(0.01)
                self.trained += 1
                if nbatch % 5 == 4:
                    logging.info("Epoch[%d] Batch [%d-%d]\tSpeed: 100.0 samples/sec\taccuracy=0.5", epoch, nbatch - 4, nbatch + 1)
                for cb in cbs:
                    cb(BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=None, locals=locals()))
            self.save_checkpoint(prefix, epoch + 1)  # do_checkpoint: epochs completed
