package dev.rdmarpc.bench;

import dev.rdmarpc.bench.driver.BenchClient;
import dev.rdmarpc.bench.driver.Lane;
import dev.rdmarpc.bench.driver.LaneListener;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * Runs one cell: drives the lanes in closed or open loop through warmup and the measured window
 * (a time, or a given number of calls), recording every completed call's latency in an HdrHistogram
 * {@link Recorder} (wait-free for the completing threads).
 */
final class CellRunner implements LaneListener {
    /** Most calls in flight in open mode; past it the schedule waits (latency still counts from the intended time). */
    static final int OPEN_MAX_IN_FLIGHT = 100_000;
    private static final long DRAIN_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final long STEADY_SLICE_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Largest spread of the last three one-second call rates for the warmup to count as steady. */
    static final double STEADY_TOLERANCE = 0.05;

    private final CellSpec spec;
    private final BenchClient client;
    private final LongSupplier serverCpu;
    private final StopSignal stop;
    private final Progress progress;
    private final Recorder recorder = new Recorder(3);
    private final LongAdder completed = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private final AtomicLong inFlight = new AtomicLong();
    private final AtomicInteger liveLanes = new AtomicInteger();
    private final Set<Lane> deadLanes = ConcurrentHashMap.newKeySet();
    private final AtomicReference<Throwable> firstError = new AtomicReference<>();
    /** Calls the lanes may still send: unlimited, or the counted calls left to send. */
    private final AtomicLong callsLeft = new AtomicLong(Long.MAX_VALUE);
    /** Counted calls not yet completed or failed. */
    private final AtomicLong unsettled = new AtomicLong(Long.MAX_VALUE);
    private final boolean counted;
    private volatile long lastSettledNanos;
    private volatile boolean allSettled;
    private volatile Thread waiter;
    private volatile boolean running;
    private boolean untilSteady;
    private long steadyAfterNanos = -1;

    CellRunner(CellSpec spec, BenchClient client, LongSupplier serverCpu, StopSignal stop, Progress progress) {
        this.spec = spec;
        this.client = client;
        this.serverCpu = serverCpu;
        this.stop = stop;
        this.progress = progress;
        this.counted = spec.calls() > 0;
    }

    /** Makes the warmup end as soon as the call rate is steady ({@code spec.warmup()} is then the most it takes). */
    CellRunner untilSteady() {
        this.untilSteady = true;
        return this;
    }

    CellResult run() {
        Lane[] lanes = new Lane[spec.concurrency()];
        for (int i = 0; i < lanes.length; i++) {
            lanes[i] = client.newLane(i, spec.workload(), this);
        }
        liveLanes.set(lanes.length);
        waiter = Thread.currentThread();

        Thread pacer = null;
        if (!counted || spec.warmup().isPositive()) {
            pacer = startLoad(lanes);
            progress.phase("warmup", spec.warmup().toNanos(), completed::sum);
            if (untilSteady) {
                warmUntilSteady();
            } else {
                stop.sleepUntil(System.nanoTime() + spec.warmup().toNanos(), this::allLanesDead);
            }
        }
        if (counted) {
            // the counted calls start from idle lanes, so that exactly those calls are measured
            stopLoad(pacer);
            pacer = null;
            callsLeft.set(spec.calls());
            unsettled.set(spec.calls());
        }

        // the measured window
        recorder.reset();
        long calls0 = completed.sum();
        long clientCpu0 = ProcessCpu.nanos();
        long serverCpu0 = serverCpu.getAsLong();
        long t0 = System.nanoTime();
        if (counted && !stop.isStopped()) {
            pacer = startLoad(lanes);
        }
        progress.phase("measure", spec.duration().toNanos(), () -> completed.sum() - calls0);
        boolean whole = !stop.isStopped()
                && stop.sleepUntil(t0 + spec.duration().toNanos(), counted ? this::countedCallsSettled : this::allLanesDead);
        Histogram h = recorder.getIntervalHistogram();
        long t1 = allSettled ? lastSettledNanos : System.nanoTime();
        long calls = h.getTotalCount();
        long clientCpu1 = ProcessCpu.nanos();
        long serverCpu1 = serverCpu.getAsLong();
        boolean partial = stop.isStopped() && !whole && !allSettled;

        // wind down: no new calls, let those in flight finish so the next cell starts clean
        progress.phase("drain", 0, completed::sum);
        stopLoad(pacer);
        for (Lane lane : lanes) {
            lane.close();
        }
        Throwable err = firstError.get();
        String error = err == null ? null : describe(err);
        if (error == null && inFlight.get() > 0 && !allLanesDead()) {
            error = inFlight.get() + " calls still unanswered " + TimeUnit.NANOSECONDS.toSeconds(DRAIN_NANOS) + " s after the window";
        }
        if (error == null && counted && !partial && calls < spec.calls()) {
            error = "only " + calls + " of " + spec.calls() + " calls completed within " + spec.duration().toMillis() + " ms";
        }
        return new CellResult(spec, client.negotiated(), h, calls, errors.sum(), (t1 - t0) / 1e9,
                clientCpu0 < 0 || clientCpu1 < 0 ? -1 : clientCpu1 - clientCpu0,
                serverCpu0 < 0 || serverCpu1 < 0 ? -1 : serverCpu1 - serverCpu0,
                partial, error);
    }

    /** Starts sending calls: every lane's first call in closed mode, the pacer thread (returned) in open mode. */
    private Thread startLoad(Lane[] lanes) {
        running = true;
        if (spec.mode() == LoadMode.CLOSED) {
            for (Lane lane : lanes) {
                if (callsLeft.getAndDecrement() <= 0) {
                    break;
                }
                inFlight.incrementAndGet();
                lane.call(System.nanoTime());
            }
            return null;
        }
        Thread pacer = new Thread(() -> pace(lanes), "bench-pacer");
        pacer.setDaemon(true);
        pacer.start();
        return pacer;
    }

    /** Stops sending calls and waits (at most {@link #DRAIN_NANOS}) for those in flight to finish. */
    private void stopLoad(Thread pacer) {
        running = false;
        if (pacer != null) {
            pacer.interrupt();
            try {
                pacer.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        long drainEnd = System.nanoTime() + DRAIN_NANOS;
        while (inFlight.get() > 0 && System.nanoTime() < drainEnd && !allLanesDead()) {
            LockSupport.parkNanos(1_000_000);
        }
    }

    /** Whether every counted call has completed or failed (or no lane is left to make them). */
    private boolean countedCallsSettled() {
        return allSettled || allLanesDead();
    }

    /**
     * Warms up in one-second slices until the call rate settles (three slices within
     * {@link #STEADY_TOLERANCE} of each other) or the warmup time is used up.
     */
    private void warmUntilSteady() {
        long end = System.nanoTime() + spec.warmup().toNanos();
        double[] rates = new double[3];
        int slices = 0;
        long last = completed.sum();
        long lastTime = System.nanoTime();
        while (System.nanoTime() < end) {
            long sliceEnd = Math.min(end, lastTime + STEADY_SLICE_NANOS);
            if (!stop.sleepUntil(sliceEnd, this::allLanesDead)) {
                return;
            }
            long now = System.nanoTime();
            long c = completed.sum();
            rates[slices++ % 3] = (c - last) * 1e9 / (now - lastTime);
            last = c;
            lastTime = now;
            if (slices >= 3) {
                double min = Math.min(rates[0], Math.min(rates[1], rates[2]));
                double max = Math.max(rates[0], Math.max(rates[1], rates[2]));
                if (max > 0 && (max - min) / max <= STEADY_TOLERANCE) {
                    steadyAfterNanos = now - (end - spec.warmup().toNanos());
                    return;
                }
            }
        }
    }

    /** How long the steady-state warmup took, or -1 when it ran out of time (or was not asked for). */
    long steadyAfterNanos() {
        return steadyAfterNanos;
    }

    private boolean allLanesDead() {
        return liveLanes.get() == 0;
    }

    private static String describe(Throwable t) {
        String m = t.getMessage();
        return m == null ? t.getClass().getSimpleName() : m;
    }

    /** Open loop: call i is due at start + i/rate whatever happened to the calls before it. */
    private void pace(Lane[] lanes) {
        long period = Math.max(1, Math.round(1e9 / spec.rate()));
        long next = System.nanoTime();
        int lane = 0;
        while (running) {
            long now = System.nanoTime();
            if (now < next) {
                LockSupport.parkNanos(next - now);
                continue;
            }
            if (inFlight.get() >= OPEN_MAX_IN_FLIGHT || allLanesDead()) {
                LockSupport.parkNanos(20_000);
                continue;
            }
            if (counted && callsLeft.getAndDecrement() <= 0) {
                return;
            }
            inFlight.incrementAndGet();
            lanes[lane].call(next);
            lane = lane + 1 == lanes.length ? 0 : lane + 1;
            next += period;
        }
    }

    @Override
    public void onComplete(Lane lane, long startNanos) {
        long now = System.nanoTime();
        recorder.recordValue(Math.max(0, now - startNanos));
        completed.increment();
        if (counted) {
            settled(now);
        }
        if (running && spec.mode() == LoadMode.CLOSED && (!counted || callsLeft.getAndDecrement() > 0)) {
            lane.call(now);
        } else {
            inFlight.decrementAndGet();
        }
    }

    /** A counted call completed or failed at {@code now}; the last one ends the window. */
    private void settled(long now) {
        if (unsettled.decrementAndGet() == 0) {
            lastSettledNanos = now;
            allSettled = true;
            LockSupport.unpark(waiter);
        }
    }

    @Override
    public void onError(Lane lane, long startNanos, Throwable error) {
        if (counted) {
            settled(System.nanoTime());
        }
        inFlight.decrementAndGet();
        if (!stop.isStopped()) {
            // failures after Ctrl-C are the run being torn down, not the transport's
            errors.increment();
            firstError.compareAndSet(null, error);
        }
        if (deadLanes.add(lane)) {
            liveLanes.decrementAndGet();
        }
    }
}
