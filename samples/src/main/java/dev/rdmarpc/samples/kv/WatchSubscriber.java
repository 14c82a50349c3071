package dev.rdmarpc.samples.kv;

import com.google.protobuf.ByteString;
import dev.rdmarpc.core.ServerCallStreamObserver;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;

import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * One Watch call, written so that a slow subscriber never holds up a writer (the pattern to copy for any fan-out):
 * a writer's Put only adds the event to this subscriber's bounded queue; a drain thread of the subscriber's own sends
 * from the queue while the call {@link ServerCallStreamObserver#isReady() is ready} and starts again when it becomes
 * ready ({@code onReady}). A subscriber that falls more than the bound behind is dropped: its queue is emptied, it is
 * no longer told of changes, and its call ends with RESOURCE_EXHAUSTED "watcher too slow".
 */
final class WatchSubscriber implements Consumer<WatchEvent> {
    /** Events a subscriber may fall behind by default before it is dropped. */
    static final int DEFAULT_MAX_QUEUED_EVENTS = 1024;
    /** Bytes of events a subscriber may fall behind (values are up to 16 MiB each). */
    static final long MAX_QUEUED_BYTES = 64L << 20;
    /** Where drains run: a virtual thread each, so a send that waits for the network holds up nothing else. */
    private static final Executor DRAINS = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("kv-watch-drain").factory());

    private final KeyValueStore store;
    private final ServerCallStreamObserver<WatchEvent> call;
    private final int maxQueuedEvents;
    private final Set<ByteString> prefixes = ConcurrentHashMap.newKeySet();
    private final Queue<WatchEvent> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queuedEvents = new AtomicInteger();
    private final AtomicLong queuedBytes = new AtomicLong();
    /** Drain requests not yet served; the one that raises it from 0 starts the drain (one drain at a time). */
    private final AtomicInteger drainRequests = new AtomicInteger();
    /** How the call is to end: OK once the client half-closed, RESOURCE_EXHAUSTED for a laggard; null while it goes on. */
    private final AtomicReference<Status> end = new AtomicReference<>();
    /** Set by the drain once it ended the call (only the drain reads and writes it). */
    private boolean ended;

    private WatchSubscriber(KeyValueStore store, ServerCallStreamObserver<WatchEvent> call, int maxQueuedEvents) {
        this.store = store;
        this.call = call;
        this.maxQueuedEvents = maxQueuedEvents;
    }

    /** Subscribes a new Watch call to {@code store}; returns the observer of its requests (prefixes to add or drop). */
    static StreamObserver<WatchRequest> start(KeyValueStore store, StreamObserver<WatchEvent> responses, int maxQueuedEvents) {
        ServerCallStreamObserver<WatchEvent> call = (ServerCallStreamObserver<WatchEvent>) responses;
        WatchSubscriber w = new WatchSubscriber(store, call, maxQueuedEvents);
        call.setOnReadyHandler(w::drainLater);
        call.setOnCancelHandler(() -> w.finish(Status.CANCELLED));
        store.addListener(w);
        return w.new Requests();
    }

    /** A change in the store, told on the writer's thread: queued if it matches, never sent from here. */
    @Override
    public void accept(WatchEvent event) {
        if (end.get() != null || !matches(event.getKey())) {
            return;
        }
        int events = queuedEvents.incrementAndGet();
        long bytes = queuedBytes.addAndGet(event.getSerializedSize());
        if (events > maxQueuedEvents || bytes > MAX_QUEUED_BYTES) {
            finish(Status.RESOURCE_EXHAUSTED.withDescription("watcher too slow: it fell " + (events - 1) + " events ("
                    + bytes + " bytes) behind, more than the server keeps for a watcher (" + maxQueuedEvents + " events, "
                    + MAX_QUEUED_BYTES + " bytes); watch again and read faster"));
            return;
        }
        queue.add(event);
        drainLater();
    }

    private boolean matches(ByteString key) {
        for (ByteString p : prefixes) {
            if (key.startsWith(p)) {
                return true;
            }
        }
        return false;
    }

    /** Decides how the call ends (the first decision wins), stops listening, and lets the drain end it. */
    private void finish(Status how) {
        if (end.compareAndSet(null, how)) {
            store.removeListener(this);
        }
        drainLater();
    }

    private void drainLater() {
        if (drainRequests.getAndIncrement() == 0) {
            DRAINS.execute(this::drain);
        }
    }

    /** Sends what the call is ready for, and ends it when decided; one drain at a time (see {@link #drainRequests}). */
    private void drain() {
        int requests = drainRequests.get();
        while (true) {
            if (!ended) {
                drainOnce();
            }
            requests = drainRequests.addAndGet(-requests);
            if (requests == 0) {
                return;
            }
        }
    }

    private void drainOnce() {
        Status how = end.get();
        if (how != null && (!how.isOk() || call.isCancelled())) {
            ended = true;
            queue.clear();
            if (how.getCode() != Status.Code.CANCELLED) {
                call.onError(how.asException()); // a laggard: what it has not taken is dropped, not sent first
            }
            return;
        }
        WatchEvent event;
        while (call.isReady() && (event = queue.poll()) != null) {
            queuedEvents.decrementAndGet();
            queuedBytes.addAndGet(-event.getSerializedSize());
            call.onNext(event);
        }
        if (how != null && queue.isEmpty()) {
            ended = true;
            call.onCompleted();
        }
    }

    /** The client's requests: prefixes to watch or to stop watching; its half-close ends the call once drained. */
    private final class Requests implements StreamObserver<WatchRequest> {
        @Override
        public void onNext(WatchRequest request) {
            if (request.getCancel()) {
                prefixes.remove(request.getPrefix());
            } else {
                prefixes.add(request.getPrefix());
            }
        }

        @Override
        public void onError(Throwable t) {
            finish(Status.CANCELLED);
        }

        @Override
        public void onCompleted() {
            finish(Status.OK);
        }
    }
}
