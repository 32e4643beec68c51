"""A stand-in for the two pieces of MXNet 1.9's API that optimus_mxnet.py relies on (no MXNet
wheel is reachable here): `mxnet.module.BaseModule.fit` calling each `batch_end_callback` with a
`BatchEndParam(epoch, nbatch, eval_metric, locals)` whose `locals['self']` is the module, and
`save_checkpoint(prefix, epoch)` writing `<prefix>-%04d.params` and logging
`Saved checkpoint to "<file>"`. Training itself is a sleep per batch."""
