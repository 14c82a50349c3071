package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.transport.rdma.verbs.AsyncEvent;
import dev.rdmarpc.transport.rdma.verbs.IbvContext;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;

/**
 * The device context's async-event thread ({@code ibv_get_async_event}): the SRQ-limit event makes the poller refill
 * and re-arm the shared receive queue; a QP's fatal or access error closes that connection with the event's name;
 * {@code IBV_EVENT_PORT_ERR} on the context's port and {@code IBV_EVENT_DEVICE_FATAL} close every connection of the
 * context and send new ones to TCP, {@code IBV_EVENT_PORT_ACTIVE} lets them upgrade again; SRQ and CQ errors are
 * logged. Every event is acknowledged at once.
 */
final class AsyncEventLoop implements Runnable {
    private final RdmaDeviceContext context;
    private final IbvContext device;
    private final Arena arena = Arena.ofShared();
    private final AsyncEvent event = new AsyncEvent(arena);
    private final Thread thread;
    private volatile boolean running = true;

    AsyncEventLoop(RdmaDeviceContext context, IbvContext device) {
        this.context = context;
        this.device = device;
        this.thread = Thread.ofPlatform().daemon().name("rdmarpc-rdma-events-" + device.deviceName()).unstarted(this);
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
        while (running) {
            try {
                if (!device.awaitAsyncEvent(event, 500)) {
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
            case AsyncEvent.QP_FATAL, AsyncEvent.QP_REQ_ERR, AsyncEvent.QP_ACCESS_ERR -> {
                RdmaEndpoint ep = context.endpointByQpAddress(element);
                if (ep != null) {
                    ep.closeOnError(new IllegalStateException("RDMA async error " + AsyncEvent.typeName(type)
                            + " on qp " + ep.qp.qpNum()));
                }
            }
            case AsyncEvent.QP_LAST_WQE_REACHED, AsyncEvent.COMM_EST, AsyncEvent.SQ_DRAINED -> {
            }
            case AsyncEvent.PORT_ERR -> {
                if (port == context.port()) {
                    context.fail(AsyncEvent.typeName(type), false);
                }
            }
            case AsyncEvent.DEVICE_FATAL -> context.fail(AsyncEvent.typeName(type), true);
            case AsyncEvent.PORT_ACTIVE -> {
                if (port == context.port()) {
                    context.portActive();
                }
            }
            case AsyncEvent.SRQ_ERR, AsyncEvent.CQ_ERR ->
                    Fallbacks.LOG.log(Level.WARNING, "RDMA device {0}: {1} (port {2})", device.deviceName(),
                            AsyncEvent.typeName(type), port);
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
