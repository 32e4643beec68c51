"""Runs the DL2 simulator's own heuristics (pengyanghua/DL2, ported to Python 3 as README.md
says) on Google-trace workloads and dumps each workload as a `dl2-jobs` JSON file for
`optimus trace import --from dl2`. Not DL2's code: it imports DL2's modules from --dl2.

usage: python3 run_dl2.py --dl2 PATH --config small|large --seeds 5 --out DIR [--policies drf,optimus]
"""
import argparse, json, os, sys, time

ARGS = None


def load_dl2(path, logs):
    sys.path.insert(0, os.path.abspath(path))
    os.makedirs(logs, exist_ok=True)
    os.chdir(logs)  # DL2's loggers write NAME.log files in the working directory
    import numpy
    import parameters
    return numpy, parameters

CONFIGS = {
    # parameters.py defaults with LARGE_SCALE = False (96 nodes, 60 jobs, <= 3 arrivals per slot)
    'small': dict(CLUSTER_NUM_NODES=96, TOT_NUM_JOBS=60, MAX_ARRVS_PER_TS=3, SCHED_WINDOW_SIZE=20),
    # parameters.py defaults (LARGE_SCALE = True): 500 nodes, 200 jobs, <= 10 arrivals per slot
    'large': dict(CLUSTER_NUM_NODES=500, TOT_NUM_JOBS=200, MAX_ARRVS_PER_TS=10, SCHED_WINDOW_SIZE=40),
}


def configure(name):
    c = CONFIGS[name]
    for k, v in c.items():
        setattr(pm, k, v)
    pm.JOB_ARRIVAL_PATTERN = 'Google_Trace'
    pm.JOB_LEN_PATTERN = 'Normal'
    pm.FIX_JOB_LEN = True
    pm.REAL_SPEED_TRACE = True
    pm.PS_WORKER = True
    pm.TS_DURATION = 1200.0
    pm.STATE_DIM = (sum([e for (_, e) in pm.INPUTS_GATE]), pm.SCHED_WINDOW_SIZE)
    pm.ACTION_DIM = 3 * pm.SCHED_WINDOW_SIZE + pm.SKIP_TS


def dump(trace, seed, config):
    jobs = []
    for ts in sorted(trace):
        for j in trace[ts]:
            jobs.append(dict(id=int(j.id), arrivalSlot=int(ts), model=j.model, numEpochs=float(j.real_num_epochs),
                             epochSize=int(j.epoch_size), psDemand=[int(x) for x in j.resr_ps],
                             workerDemand=[int(x) for x in j.resr_worker]))
    return dict(format='dl2-jobs', version=1, config=config, seed=seed, slotSec=pm.TS_DURATION,
                nodes=pm.CLUSTER_NUM_NODES, slotsPerNode=pm.NUM_RESR_SLOTS, slotsPerGpu=4,
                maxTasks=pm.MAX_NUM_WORKERS, jobs=jobs)


def run(env_cls, name, trace):
    for ts in trace:
        for j in trace[ts]:
            j.reset()
    env = env_cls(name, trace, None)
    while not env.end:
        env.step()
    n, jct, makespan, _ = env.get_results()
    return dict(jobs=n, avgJctSlots=jct, makespanSlots=makespan, jctsSlots=sorted(env.get_job_jcts().values()))


def main():
    global np, pm
    ap = argparse.ArgumentParser()
    ap.add_argument('--dl2', required=True, help='the Python 3 port of pengyanghua/DL2')
    ap.add_argument('--config', choices=sorted(CONFIGS), required=True)
    ap.add_argument('--seeds', type=int, default=5)
    ap.add_argument('--out', required=True)
    ap.add_argument('--policies', default='drf,fifo,srtf,tetris,optimus', help='DL2 heuristics to run')
    a = ap.parse_args()
    a.out = os.path.abspath(a.out)
    np, pm = load_dl2(a.dl2, os.path.join(a.out, 'logs'))
    configure(a.config)
    import trace as tr, drf_env, fifo_env, srtf_env, tetris_env, optimus_env
    envs = [('drf', drf_env.DRF_Env), ('fifo', fifo_env.FIFO_Env), ('srtf', srtf_env.SRTF_Env),
            ('tetris', tetris_env.Tetris_Env), ('optimus', optimus_env.Optimus_Env)]
    wanted = a.policies.split(',')
    envs = [e for e in envs if e[0] in wanted]
    os.makedirs(a.out, exist_ok=True)
    results = dict(config=a.config, seeds=a.seeds, slotSec=pm.TS_DURATION, perSeed={})
    for seed in range(1, a.seeds + 1):
        np.random.seed(seed)
        trace = tr.Trace(None).get_trace()
        with open(os.path.join(a.out, 'dl2-%s-seed%d.json' % (a.config, seed)), 'w') as f:
            json.dump(dump(trace, seed, a.config), f, indent=1)
        per = {}
        for name, cls in envs:
            t0 = time.time()
            r = run(cls, name, trace)
            r['wallSec'] = round(time.time() - t0, 2)
            per[name] = r
            print('%s seed %d %-8s avg JCT %.3f slots (%.0f s), makespan %.2f slots, %.1f s wall' % (
                a.config, seed, name, r['avgJctSlots'], r['avgJctSlots'] * pm.TS_DURATION, r['makespanSlots'],
                r['wallSec']), flush=True)
        results['perSeed'][seed] = per
    with open(os.path.join(a.out, 'dl2-%s-results.json' % a.config), 'w') as f:
        json.dump(results, f, indent=1)


if __name__ == '__main__':
    main()
