"""Drover's iteration-time hook for training loops: standard library only.

    from drover_iter import DroverIter
    hook = DroverIter()  # job id, worker: DROVER_JOB_ID, DROVER_WORKER (or RANK)
    for batch in loader:
        ...              # forward, backward, optimizer step
        hook.step()      # once per iteration: the time since the previous call

A daemon thread posts the times to the node's drover agent (POST /v1/iterations)
every `every` seconds or `batch` iterations. step() never raises or waits on the
network; times it cannot keep or send are counted and reported as dropped.
"""
import atexit, json, os, threading, time, urllib.request


class DroverIter:
    def __init__(self, job_id=None, worker=None, addr=None, every=1.0, batch=64, limit=4096):
        env = os.environ.get
        self.url = "http://%s/v1/iterations" % (addr or env("DROVER_AGENT_ADDR") or "127.0.0.1:9465")
        self.job_id = job_id or env("DROVER_JOB_ID") or ""
        self.worker = int(worker if worker is not None else env("DROVER_WORKER") or env("RANK") or 0)
        self.every, self.batch, self.limit = every, batch, limit
        self.times, self.dropped, self.last = [], 0, None
        self.lock, self.wake = threading.Lock(), threading.Event()
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the agent is local
        threading.Thread(target=self._run, daemon=True).start()
        atexit.register(self.flush)

    def step(self):
        """Records the time since the previous call (the first call starts the clock)."""
        try:
            now = time.monotonic()
            last, self.last = self.last, now
            if last is None:
                return
            with self.lock:
                if now > last and len(self.times) < self.limit:
                    self.times.append(now - last)
                else:
                    self.dropped += 1
                if len(self.times) >= self.batch:
                    self.wake.set()
        except Exception:
            pass

    def flush(self):
        """Posts what is buffered now; a failed post counts its times as dropped."""
        with self.lock:
            times, dropped, self.times, self.dropped = self.times, self.dropped, [], 0
        if not (times or dropped) or not self.job_id:
            return
        body = {"job_id": self.job_id, "worker": self.worker, "seconds": times, "dropped": dropped}
        req = urllib.request.Request(self.url, json.dumps(body).encode(), {"Content-Type": "application/json"})
        try:
            self.opener.open(req, timeout=2).close()
        except Exception:  # the agent is away or refused the report
            with self.lock:
                self.dropped += len(times) + dropped

    def _run(self):
        while True:
            self.wake.wait(self.every)
            self.wake.clear()
            self.flush()
