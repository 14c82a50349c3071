package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.transport.rdma.verbs.AsyncEvent;
import dev.rdmarpc.transport.rdma.verbs.IbvContext;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;

/**
 * The device context's async-event thread ({@code ibv_get_async_event}): the SRQ-limit event makes the poller refill
 * and re-arm the shared receive queue; a queue pair's fatal, request or access error, or its last-WQE event while the
 * connection is open (the queue pair went to ERR), is a path fault ({@link PathFaults}); {@code IBV_EVENT_PORT_ERR} on
 * the context's port closes every connection of the context and sends new ones to TCP until
 * {@code IBV_EVENT_PORT_ACTIVE}; {@code IBV_EVENT_DEVICE_FATAL} and an error of the shared SRQ or CQ retire the
 * context (every connection closes, the next one opens the device anew). Every event is acknowledged at once. Between
 * events, every {@link PathFaults#CHECK_MILLIS} it has the poller check its connections' queue-pair states, and
 * checks that the device is still registered ({@link DevicePresence}): a removed device retires the context too.
 */
final class AsyncEventLoop implements Runnable {
    private final RdmaDeviceContext context;
    private final IbvContext device;
    private final Arena arena = Arena.ofShared();
    private final AsyncEvent event = new AsyncEvent(arena);
    private final Thread thread;
    private final Runnable checkQueuePairs;
    private final DevicePresence presence;
    private boolean removalSeen;
    private volatile boolean running = true;

    AsyncEventLoop(RdmaDeviceContext context, IbvContext device) {
        this.context = context;
        this.device = device;
        this.thread = Thread.ofPlatform().daemon().name("rdmarpc-rdma-events-" + device.deviceName()).unstarted(this);
        this.checkQueuePairs = () -> PathFaults.checkQueuePairs(context);
        this.presence = new DevicePresence(GidTable.SYSFS, device.deviceName());
    }

    void start() {
        thread.start();
    }

    void stop() {
        running = false;
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        arena.close();
    }

    @Override
    public void run() {
        long checkNanos = PathFaults.CHECK_MILLIS * 1_000_000L;
        long waitMillis = checkNanos > 0 ? Math.min(500, PathFaults.CHECK_MILLIS) : 500;
        long lastCheck = System.nanoTime();
        while (running) {
            try {
                boolean got = device.awaitAsyncEvent(event, waitMillis);
                long now = System.nanoTime();
                if (checkNanos > 0 && now - lastCheck >= checkNanos) {
                    lastCheck = now;
                    if (context.queuePairs() > 0) {
                        context.poller().execute(checkQueuePairs);
                    }
                    if (!removalSeen && presence.removed()) {
                        removalSeen = true;
                        context.fail("device removed (no longer in sysfs)", true);
                    }
                }
                if (!got) {
                    continue;
                }
                int type = event.type();
                long element = event.elementAddress();
                int port = event.portNum();
                event.ack();
                handle(type, element, port);
            } catch (RuntimeException e) {
                if (running) {
                    Fallbacks.LOG.log(Level.WARNING, "RDMA async event loop: " + e);
                    sleepQuietly();
                }
            }
        }
    }

    private void handle(int type, long element, int port) {
        switch (type) {
            case AsyncEvent.SRQ_LIMIT_REACHED -> {
                RdmaMetrics.SRQ_LIMIT_EVENTS.increment();
                context.poller().execute(context::refillReceives);
            }
            case AsyncEvent.QP_FATAL, AsyncEvent.QP_REQ_ERR, AsyncEvent.QP_ACCESS_ERR, AsyncEvent.QP_LAST_WQE_REACHED -> {
                // last WQE reached: a queue pair on the SRQ went to ERR (our own close does that too, but then the
                // connection is no longer open and PathFaults ignores it)
                RdmaEndpoint ep = context.endpointByQpAddress(element);
                if (ep != null) {
                    String reason = "RDMA async event " + AsyncEvent.typeName(type) + " on qp " + ep.qp.qpNum();
                    context.poller().execute(() -> {
                        context.poller().drainCompletions(); // a completion error that caused it tells more
                        PathFaults.failed(ep, reason);
                    });
                }
            }
            case AsyncEvent.COMM_EST, AsyncEvent.SQ_DRAINED -> {
            }
            case AsyncEvent.PORT_ERR -> {
                if (port == context.port()) {
                    context.fail(AsyncEvent.typeName(type), false);
                }
            }
            // the SRQ and the CQ are shared by every connection of the context: an error of either breaks them all
            case AsyncEvent.DEVICE_FATAL, AsyncEvent.SRQ_ERR, AsyncEvent.CQ_ERR -> context.fail(AsyncEvent.typeName(type), true);
            case AsyncEvent.PORT_ACTIVE -> {
                if (port == context.port()) {
                    context.portActive();
                }
            }
            default -> Fallbacks.LOG.log(Level.DEBUG, "RDMA device {0}: {1}", device.deviceName(), AsyncEvent.typeName(type));
        }
    }

    private static void sleepQuietly() {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
