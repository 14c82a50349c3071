package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.transport.rdma.verbs.CompletionChannel;
import dev.rdmarpc.transport.rdma.verbs.CompletionQueue;
import dev.rdmarpc.transport.rdma.verbs.EventFd;
import dev.rdmarpc.transport.rdma.verbs.WorkCompletion;
import dev.rdmarpc.transport.rdma.verbs.WorkCompletionBatch;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The device context's one I/O thread, a duty cycle: run queued tasks, poll the context's CQs (one, or a few where the
 * device's CQs are too small for every queue pair) and dispatch each completion (receive → that QP's
 * {@link ReceivePath}, send-queue → its {@link SendPath}); when a cycle finds nothing it keeps spinning for
 * {@code spinMicros}, then arms every CQ, polls once more (completions that landed before arming raise no event) and
 * blocks on the completion channel they share and a wakeup eventfd. Nothing here allocates in steady state.
 */
final class CompletionPoller implements Runnable {
    private static final int BATCH = 32;
    private static final long IDLE_WAIT_MILLIS = 1000;

    private final RdmaDeviceContext context;
    private final CompletionQueue[] cqs;
    private final CompletionChannel channel;
    private final ReceiveQueue receives;
    private final WorkCompletionBatch batch;
    private final EventFd wakeup;
    private final long spinNanos;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final RdmaEndpoint[] touched = new RdmaEndpoint[BATCH];
    private final ArrayList<RdmaEndpoint> draining = new ArrayList<>();
    /** Endpoints whose read burst core heard start in this cycle: each hears its end once the cycle is done. */
    private final ArrayList<RdmaEndpoint> inReadBurst = new ArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile boolean sleeping;
    private int touchedCount;
    private int refillsOwed;

    CompletionPoller(RdmaDeviceContext context, CompletionQueue[] cqs, CompletionChannel channel, ReceiveQueue receives,
                     Arena arena, long spinMicros) {
        this.context = context;
        this.cqs = cqs.clone();
        this.channel = channel;
        this.receives = receives;
        this.batch = new WorkCompletionBatch(arena, BATCH);
        this.wakeup = new EventFd();
        this.spinNanos = spinMicros * 1000L;
        this.thread = Thread.ofPlatform().daemon().name("rdmarpc-rdma-poller-" + context.deviceName()).unstarted(this);
    }

    void start() {
        thread.start();
    }

    boolean isPollerThread() {
        return Thread.currentThread() == thread;
    }

    /** Runs {@code task} on the poller thread, soon. */
    void execute(Runnable task) {
        tasks.add(task);
        if (sleeping && Thread.currentThread() != thread) {
            wakeup.signal();
        }
    }

    /** Poller: {@code endpoint} waits for its drain marker (or its deadline). */
    void awaitDrain(RdmaEndpoint endpoint) {
        draining.add(endpoint);
    }

    /** Stops the thread and waits for it. */
    void stop() {
        running = false;
        wakeup.signal();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        wakeup.close();
    }

    @Override
    public void run() {
        long lastWork = System.nanoTime();
        while (running) {
            try {
                int work = runTasks() + pollOnce();
                if (work > 0) {
                    lastWork = System.nanoTime();
                    continue;
                }
                if (spinNanos > 0 && System.nanoTime() - lastWork < spinNanos) {
                    Thread.onSpinWait();
                    continue;
                }
                sleeping = true;
                for (CompletionQueue cq : cqs) {
                    cq.requestNotify(false);
                }
                if (pollOnce() > 0 || !tasks.isEmpty()) {
                    sleeping = false;
                    lastWork = System.nanoTime();
                    continue;
                }
                CompletionQueue signalled = channel.awaitEvent(draining.isEmpty() ? IDLE_WAIT_MILLIS : 50, wakeup);
                sleeping = false;
                RdmaMetrics.POLLER_WAKEUPS.increment();
                if (signalled != null) {
                    signalled.ackEvents(signalled.unackedEvents());
                } else if (running && tasks.isEmpty()) {
                    checkLostWakeup();
                }
                checkDrainDeadlines();
            } catch (Throwable t) {
                if (!running) {
                    break;
                }
                Fallbacks.LOG.log(Level.ERROR, "RDMA poller of " + context.deviceName() + " failed; continuing", t);
            }
        }
    }

    /**
     * After a wait that ended with neither a completion event nor a task (it timed out): completions found now, while
     * still no event is pending, arrived after the CQ was armed without raising an event - a lost wake-up, counted and
     * logged. Completions whose event is pending were announced, just after the wait gave up.
     */
    private void checkLostWakeup() {
        int found = pollOnce();
        if (found == 0) {
            return;
        }
        CompletionQueue late = channel.awaitEvent(0, wakeup);
        if (late != null) {
            late.ackEvents(late.unackedEvents());
            return;
        }
        RdmaMetrics.LOST_WAKEUPS.increment();
        Fallbacks.LOG.log(Level.WARNING, "RDMA poller of {0}: {1} completions arrived on an armed CQ without a completion "
                + "event; found after a {2} ms idle wait", context.deviceName(), found, IDLE_WAIT_MILLIS);
    }

    /** Poller: handles the completions already in the CQ (a few batches at most). */
    void drainCompletions() {
        for (int i = 0; i < 8 && pollOnce() > 0; i++) {
            // each batch is dispatched by pollOnce
        }
    }

    private int runTasks() {
        int n = 0;
        Runnable r;
        while ((r = tasks.poll()) != null) {
            n++;
            try {
                r.run();
            } catch (RuntimeException e) {
                Fallbacks.LOG.log(Level.WARNING, "RDMA poller task failed", e);
            }
        }
        endReadBursts();
        return n;
    }

    /** An endpoint's first frame of this cycle is about to reach core: it hears the burst's end in {@link #endReadBursts}. */
    void readBurstStarted(RdmaEndpoint ep) {
        inReadBurst.add(ep);
    }

    /**
     * Tells core, for each endpoint that delivered frames since the last call, that the read burst is over (core then
     * wakes its callback worker once for all of them). Runs after every task run and every poll, so no burst stays open
     * past the cycle that opened it.
     */
    private void endReadBursts() {
        for (int i = 0; i < inReadBurst.size(); i++) {
            RdmaEndpoint ep = inReadBurst.get(i);
            try {
                ep.endReadBurst();
            } catch (RuntimeException e) {
                ep.closeOnError(e);
            }
        }
        inReadBurst.clear();
    }

    /** Polls every CQ once, each batch dispatched and followed through before the next CQ's. */
    private int pollOnce() {
        int n = 0;
        for (CompletionQueue cq : cqs) {
            n += pollOnce(cq);
        }
        return n;
    }

    private int pollOnce(CompletionQueue cq) {
        int n = cq.poll(batch);
        if (n == 0) {
            return 0;
        }
        for (int i = 0; i < n; i++) {
            WorkCompletion wc = batch.get(i);
            long wrId = wc.wrId();
            int endpointId = (int) (wrId >>> 32);
            if (endpointId == 0) {
                onReceive(wc, (int) wrId);
            } else {
                onSendQueue(wc, endpointId, (int) wrId);
            }
        }
        for (int i = 0; i < touchedCount; i++) {
            RdmaEndpoint ep = touched[i];
            touched[i] = null;
            ep.touched = false;
            afterBatch(ep);
        }
        touchedCount = 0;
        endReadBursts();
        if (refillsOwed > 0) {
            refillsOwed = 0;
            receives.fill();
        }
        return n;
    }

    private void touch(RdmaEndpoint ep) {
        if (!ep.touched && touchedCount < touched.length) {
            ep.touched = true;
            touched[touchedCount++] = ep;
        }
    }

    private void onReceive(WorkCompletion wc, int slot) {
        int status = wc.status();
        SlabBuffer buf = receives.take(slot);
        if (buf == null) {
            return;
        }
        RdmaEndpoint ep = context.endpointByQpn(wc.qpNum());
        if (status != WorkCompletion.STATUS_SUCCESS) {
            if (status != WorkCompletion.STATUS_WR_FLUSH_ERR) {
                RdmaMetrics.COMPLETION_ERRORS.increment();
                context.counters().completionErrors.increment();
                if (ep != null) {
                    ep.closeOnError(new IllegalStateException("RDMA completion error " + WorkCompletion.statusName(status)
                            + " on a receive, qp " + wc.qpNum()
                            + (status == WorkCompletion.STATUS_LOC_LEN_ERR
                            ? " (the peer sent more than the " + receives.bufferSize() + "-byte receive buffer)" : "")));
                }
            }
            repost(slot, buf);
            return;
        }
        if (ep == null || !ep.isOpen()) {
            repost(slot, buf);
            return;
        }
        boolean creditDue = false;
        try {
            creditDue = ep.receive.onReceive(buf, wc.byteLength());
        } catch (RuntimeException e) {
            ep.closeOnError(e);
        }
        if (buf.refCnt() > 1) {
            // queued frames or core keep it: the slot gets a fresh buffer, so the ring never shrinks
            buf.release();
            receives.refill(slot);
        } else {
            repost(slot, buf);
        }
        if (creditDue) {
            try {
                ep.send.receivesDone(1);
            } catch (RuntimeException e) {
                ep.closeOnError(e);
            }
        }
        touch(ep);
    }

    private void repost(int slot, SlabBuffer buf) {
        receives.repost(slot, buf);
        if (receives.posted() < receives.depth()) {
            refillsOwed++;
        }
    }

    private void onSendQueue(WorkCompletion wc, int endpointId, int seq) {
        RdmaEndpoint ep = context.endpointById(endpointId);
        if (ep == null) {
            return; // torn down: its slots were freed with it
        }
        int status = wc.status();
        boolean error = status != WorkCompletion.STATUS_SUCCESS && status != WorkCompletion.STATUS_WR_FLUSH_ERR;
        if (error) {
            RdmaMetrics.COMPLETION_ERRORS.increment();
            context.counters().completionErrors.increment();
        }
        int result;
        try {
            result = ep.send.onCompletion(seq, status);
        } catch (ProtocolException e) {
            ep.closeOnError(e); // the peer named memory it had not granted: bad input, not a broken path
            result = 0;
        } catch (RuntimeException e) {
            if (error && PathFaults.isPathStatus(status)) {
                PathFaults.failed(ep, e.getMessage() != null ? e.getMessage() : e.toString());
            }
            ep.closeOnError(e);
            result = 0;
        }
        if ((result & SendPath.DRAINED) != 0) {
            draining.remove(ep);
            ep.finishTeardown();
            return;
        }
        if (status == WorkCompletion.STATUS_WR_FLUSH_ERR && ep.isOpen()) {
            // flushed while we had not closed it: the queue pair went to ERR under us
            PathFaults.failed(ep, "RDMA queue pair qp " + ep.qp.qpNum() + " went to the error state (a work request was "
                    + "flushed while the connection was open)");
        }
        touch(ep);
    }

    private void afterBatch(RdmaEndpoint ep) {
        if (!ep.isOpen()) {
            return;
        }
        try {
            ep.send.retry();
            ep.receive.deliverReady();
        } catch (RuntimeException e) {
            ep.closeOnError(e);
        }
    }

    private void checkDrainDeadlines() {
        if (draining.isEmpty()) {
            return;
        }
        long now = System.nanoTime();
        for (int i = draining.size() - 1; i >= 0; i--) {
            RdmaEndpoint ep = draining.get(i);
            if (now - ep.drainDeadlineNanos >= 0) {
                draining.remove(i);
                RdmaMetrics.DRAIN_TIMEOUTS.increment();
                Fallbacks.LOG.log(Level.DEBUG, "no flush completion from qp {0}; destroying it", ep.qp.qpNum());
                ep.finishTeardown();
            }
        }
    }
}
