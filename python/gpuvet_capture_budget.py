# The capture's memory (docs/capture.md, "Measured"): the size of the device queue
# of values waiting to be copied out, grown in warm-up passes while the pass's
# peak GPU memory stays within PEAK_LIMIT of the plain forward's; the process's
# peak resident memory.
from gpuvet_capture_load import fill
from gpuvet_capture_tensors import Tensors

def proc_rss_peak():
    """The peak resident memory of this process (VmHWM), in bytes; -1 if unknown."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return -1


def reset_rss_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def gpu_segments(torch, worker):
    """(device memory segments PyTorch's allocator has taken from the driver so far,
    its retries after a failed allocation); None off the GPU."""
    if not worker.is_gpu:
        return None
    st = torch.cuda.memory_stats(worker.dev)
    return int(st.get("segment.all.allocated", 0)), int(st.get("num_alloc_retries", 0))


# the device queue: it starts at QUEUE_START of the plain forward's peak GPU memory (it
# keeps at most that much alive, so the capture's peak stays within 1.4x), and grows in
# the warm-up while the measured peak of a pass stays within PEAK_LIMIT of the plain one
QUEUE_START = 0.4
# the values copied out of the device queue wait in the worker until the pass is over,
# at most HOLD_SHARE of the plain forward's peak resident memory (the capture's target
# is 1.5x of it); beyond that they are sent mid-pass
HOLD_SHARE = 0.35
PEAK_LIMIT = 1.4


def next_budget(plain_peak, tried):
    """The queue size for the next warm-up pass, from the passes so far: tried is
    [(budget, the pass's GPU peak, times the queue was emptied)], in order. The
    queue grows by the headroom the last pass left under PEAK_LIMIT (a queue keeps
    at most its size alive); a pass that went over is followed by the size the
    last two passes point at (the peak grows with the queue about linearly), and
    if that went over too, by the largest size that stayed within. A pass that
    never emptied the queue needs no larger one. Returns the last budget when it
    should stay."""
    limit = PEAK_LIMIT * plain_peak
    budget, peak, flushes = tried[-1]
    fits = [b for b, p, _ in tried if p <= limit]
    if peak > limit:
        if len(tried) >= 2 and tried[-2][1] <= limit and tried[-2][1] < peak:
            b0, p0, _ = tried[-2]
            guess = int(b0 + (budget - b0) * (limit - p0) / (peak - p0))
            if guess > b0 and guess not in [b for b, _, _ in tried]:
                return guess
        return max(fits) if fits else max(int(QUEUE_START * plain_peak) // 2, 1)
    if not flushes or budget != max(b for b, _, _ in tried):
        return budget  # everything fitted, or already back at the best one
    grow = int(limit - peak)
    if grow < 0.05 * plain_peak:
        return budget  # too little headroom to matter
    return budget + grow


def warm_up(torch, worker, model, call, inputs, roles, budget, any_device, stack, Recorder,
            pool, plain_peak=None, reset=None):
    """Runs the forward recorded as the capture will (queue, copies on the device),
    with timing events and sending nothing, until a pass at the queue size the
    capture will use takes no new device memory from the driver (1 pass off the
    GPU). With plain_peak (the plain forward's peak GPU memory), the queue's size
    is adapted first (next_budget), each pass's peak measured. Returns {"passes":
    n, "segments": new, "records": the last pass's op records, with their device
    times, "budget": the queue size, "sizes": [(size, peak, flushes)] of the
    passes, "gpu_peak": the highest peak of a pass}. reset() runs before each pass."""
    passes, new, tried, top = 0, 0, [], 0
    most = (3 + (4 if plain_peak else 0)) if worker.is_gpu else 1
    while passes < most:
        seg0 = gpu_segments(torch, worker)
        if seg0 is not None:
            torch.cuda.reset_peak_memory_stats(worker.dev)
        if reset is not None:
            reset()  # (the buffers a forward changes, as before the first pass)
        dry = Tensors(torch, None, roles, budget, worker.sync, any_device=any_device, dry=True)
        for i, x in enumerate(inputs):
            dry.ref(x, "input:%d" % i)
        rec = Recorder(worker, dry, stack, pool)
        args, kwargs = fill(call, inputs)
        with torch.no_grad():
            with rec:
                model(*args, **kwargs)
        dry.flush(final=True)
        worker.sync()
        if worker.is_gpu:
            rec.op_times()
        records = rec.records
        del stack[:]
        passes += 1
        if seg0 is None:
            break
        peak = int(torch.cuda.max_memory_allocated(worker.dev))
        top = max(top, peak)
        grown = gpu_segments(torch, worker)[0] - seg0[0]
        new += grown
        if plain_peak:
            tried.append((budget, peak, dry.flushes))
            nb = next_budget(plain_peak, tried)
            if nb != budget and passes < most:  # (the capture runs at a size a pass ran)
                budget = nb
                continue
        if not grown:
            break
    return {"passes": passes, "segments": new, "records": records, "budget": budget,
            "sizes": tried, "gpu_peak": top}
