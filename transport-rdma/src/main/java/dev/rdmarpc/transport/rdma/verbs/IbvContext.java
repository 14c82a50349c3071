package dev.rdmarpc.transport.rdma.verbs;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** An open RDMA device ({@code struct ibv_context *}): queries, and the factory of PDs, CQs and channels. */
public final class IbvContext implements AutoCloseable {
    private final MemorySegment ctx;
    private final String deviceName;
    private boolean closed;

    IbvContext(MemorySegment ctx, String deviceName) {
        this.ctx = ctx;
        this.deviceName = deviceName;
    }

    MemorySegment segment() {
        return ctx;
    }

    /** Address of the {@code struct ibv_context}. */
    public long address() {
        return ctx.address();
    }

    /** Kernel name of the device, e.g. {@code rxe0}. */
    public String deviceName() {
        return deviceName;
    }

    /** The context's async-event file descriptor ({@code ibv_context.async_fd}). */
    public int asyncFd() {
        return ctx.get(JAVA_INT, IbvContextStruct.ASYNC_FD);
    }

    /** Number of completion vectors ({@code ibv_context.num_comp_vectors}). */
    public int numCompVectors() {
        return ctx.get(JAVA_INT, IbvContextStruct.NUM_COMP_VECTORS);
    }

    /** Device limits and capabilities ({@code ibv_query_device}). */
    public DeviceAttributes queryDevice() {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(IbvDeviceAttr.LAYOUT);
            LibIbverbs.queryDevice(ctx, attr);
            return DeviceAttributes.read(attr);
        }
    }

    /** On-demand paging capabilities ({@code ibv_query_device_ex}); {@link OdpCapabilities#NONE} without that verb. */
    public OdpCapabilities queryOdpCapabilities() {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(IbvDeviceAttrEx.SIZE, 8);
            if (!LibIbverbs.queryDeviceEx(ctx, attr)) {
                return OdpCapabilities.NONE;
            }
            return new OdpCapabilities(attr.get(JAVA_LONG, IbvDeviceAttrEx.ODP_GENERAL_CAPS),
                    attr.get(JAVA_INT, IbvDeviceAttrEx.ODP_RC_CAPS), true);
        }
    }

    /** Port state, MTU, link layer ({@code ibv_query_port}; ports count from 1). */
    public PortAttributes queryPort(int port) {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(IbvPortAttr.LAYOUT); // zeroed, full current struct size
            LibIbverbs.queryPort(ctx, port, attr);
            return PortAttributes.read(attr);
        }
    }

    /** One entry of a port's GID table ({@code ibv_query_gid}). */
    public Gid queryGid(int port, int index) {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment gid = arena.allocate(IbvGid.LAYOUT);
            LibIbverbs.queryGid(ctx, port, index, gid);
            return Gid.read(gid, 0);
        }
    }

    /** Allocates a protection domain ({@code ibv_alloc_pd}). */
    public ProtectionDomain allocProtectionDomain() {
        ensureOpen();
        return new ProtectionDomain(this, LibIbverbs.allocPd(ctx));
    }

    /** Creates a completion channel ({@code ibv_create_comp_channel}) for event-mode completion waiting. */
    public CompletionChannel createCompletionChannel() {
        ensureOpen();
        return new CompletionChannel(this, LibIbverbs.createCompChannel(ctx));
    }

    /**
     * Creates a completion queue ({@code ibv_create_cq}).
     *
     * @param minEntries minimum number of entries (the device may give more)
     * @param channel    the completion channel to signal, or null for polling only
     * @param compVector the completion vector, {@code 0 <= compVector < numCompVectors()}
     */
    public CompletionQueue createCompletionQueue(int minEntries, CompletionChannel channel, int compVector) {
        ensureOpen();
        MemorySegment cq = LibIbverbs.createCq(ctx, minEntries, MemorySegment.NULL,
                channel == null ? MemorySegment.NULL : channel.segment(), compVector);
        CompletionQueue result = new CompletionQueue(this, cq, channel);
        if (channel != null) {
            channel.register(result);
        }
        return result;
    }

    /**
     * Waits up to {@code timeoutMillis} ({@code < 0}: forever) for the next async event ({@code ibv_get_async_event}:
     * port changes, QP fatal, SRQ limit reached, ...) and fills {@code event} with it.
     * Every event received must be acknowledged with {@link AsyncEvent#ack()} before its object is destroyed.
     *
     * @return false on timeout
     */
    public boolean awaitAsyncEvent(AsyncEvent event, long timeoutMillis) {
        ensureOpen();
        if (!LibC.awaitReadable(event.pollScratch(), asyncFd(), timeoutMillis, "async event")) {
            return false;
        }
        event.fill(this);
        return true;
    }

    void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("device context " + deviceName + " is closed");
        }
    }

    /** Whether {@link #close()} ran. */
    public boolean isClosed() {
        return closed;
    }

    /** Closes the device ({@code ibv_close_device}); close everything created from it first. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            LibIbverbs.closeDevice(ctx);
        }
    }

    @Override
    public String toString() {
        return "IbvContext[" + deviceName + (closed ? ", closed" : "") + "]";
    }
}
