package dev.rdmarpc.core.protocol;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The HELLO payload: magic, protocol version, flow-control and size limits, and capability
 * blocks (id → bytes). Capability {@link #CAP_RDMA} carries the RDMA connection parameters, {@link #CAP_LIMITS} the
 * limits the sender enforces on what it receives.
 */
public record Hello(int version, int initialWindow, int maxFramePayload, int maxMessageSize,
                    Map<Integer, byte[]> capabilities) {
    /** "RDRP" as a little-endian int. */
    public static final int MAGIC = 0x50524452;
    public static final int VERSION = 1;
    /** Capability id of the RDMA parameters block (GID, LID, QPN, PSN, MTU, inline size, receive buffers). */
    public static final int CAP_RDMA = 1;
    /** Capability id of the limits block (max concurrent streams, max metadata bytes): {@link LimitsCapability}. */
    public static final int CAP_LIMITS = 2;
    /** Capability id of the connection-level flow-control block (connection window): {@link FlowCapability}. */
    public static final int CAP_FLOW = 3;
    private static final int FIXED_SIZE = 4 + 2 + 2 + 4 + 4 + 4 + 2;

    public Hello {
        capabilities = Map.copyOf(capabilities);
    }

    public int encodedSize() {
        int size = FIXED_SIZE;
        for (byte[] v : capabilities.values()) {
            size += 4 + v.length;
        }
        return size;
    }

    public void encode(WireWriter w) {
        w.i32(MAGIC).u16(version).u16(0).i32(initialWindow).i32(maxFramePayload).i32(maxMessageSize);
        w.u16(capabilities.size());
        for (Map.Entry<Integer, byte[]> e : capabilities.entrySet()) {
            w.u16(e.getKey()).u16(e.getValue().length).bytes(e.getValue());
        }
    }

    /** Parses and checks a HELLO; a wrong magic or an unsupported version is a protocol error. */
    public static Hello decode(WireReader r) {
        int magic = r.i32();
        if (magic != MAGIC) {
            throw new ProtocolException("HELLO has a bad magic 0x" + Integer.toHexString(magic) + ": peer is not an rdmarpc endpoint");
        }
        int version = r.u16();
        if (version != VERSION) {
            throw new ProtocolException("unsupported protocol version " + version + " (this side speaks " + VERSION + ")");
        }
        int reserved = r.u16();
        if (reserved != 0) {
            throw new ProtocolException("HELLO reserved field is " + reserved);
        }
        int window = r.i32();
        int maxFrame = r.i32();
        int maxMessage = r.i32();
        if (window <= 0) {
            throw new ProtocolException("HELLO initial window " + window + " must be positive");
        }
        if (maxFrame < 1024 || maxFrame > FrameHeader.MAX_PAYLOAD_LIMIT) {
            throw new ProtocolException("HELLO max frame payload " + maxFrame + " outside [1024, " + FrameHeader.MAX_PAYLOAD_LIMIT + "]");
        }
        if (maxMessage < 0) {
            throw new ProtocolException("HELLO max message size " + maxMessage + " is negative");
        }
        int count = r.u16();
        Map<Integer, byte[]> caps = new LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
            int id = r.u16();
            int len = r.u16();
            if (caps.put(id, r.bytes(len)) != null) {
                throw new ProtocolException("HELLO repeats capability " + id);
            }
        }
        r.end();
        return new Hello(version, window, maxFrame, maxMessage, caps);
    }
}
